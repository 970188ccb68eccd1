/**
 * The types validate reads a schema as (types.ts fromSchema): an object whose schema lists no members is what the
 * schema says, one with no member at all unless it takes other members, not "anything": a member read under it
 * (`event.data.whatever.nonsense`) passed validate and was null at run time. And a schema's list of numbers is
 * checked as its list of texts is, for an expression whose value validate knows.
 */
import { expect } from 'chai';
import { findExpressions } from '../../src/expressions/template.js';
import { notAllowed } from '../../src/playbook/known-values.js';
import { typeOf } from '../../src/playbook/types-check.js';
import { eventType, fromSchema, type T } from '../../src/playbook/types.js';

/** The problems of `source` with `event` of type `event`. */
const problems = (source: string, event: T) =>
  typeOf(source, false, { key: `test|${JSON.stringify(event)}`, vars: { event } }).problems.map(
    (p) => p.message,
  );

const EVENT = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    data: { type: 'object' },
    rows: { type: 'array', items: { type: 'object', properties: {} } },
    extra: { type: 'object', additionalProperties: true },
    pattern: { type: 'object', patternProperties: { '^.*$': {} } },
  },
};

describe('playbook types: an object whose schema lists no members', () => {
  const event = fromSchema(EVENT, false, 'schemas/events/Test.schema.json#');

  it('refuses a member read under it, naming the field and where its schema is', () => {
    expect(problems('event.data.whatever.nonsense == 1', event)).to.deep.equal([
      '`event.data` has no member `whatever`: its schema lists none and takes no other (schemas/events/Test.schema.json#/properties/data)',
    ]);
    expect(problems('event.rows[0].x', event)).to.deep.equal([
      '`event.rows[0]` has no member `x`: its schema lists none and takes no other (schemas/events/Test.schema.json#/properties/rows/items)',
    ]);
    // The object itself is read freely.
    expect(problems('event.data != null && size(event.data) == 0', event)).to.deep.equal([]);
  });

  it('reads any member of one that takes other members', () => {
    expect(problems('event.extra.anything.deeper == 1', event)).to.deep.equal([]);
    expect(problems('event.pattern.anything == 1', event)).to.deep.equal([]);
  });

  it('reads any member of the payloads the callback services do not show', () => {
    for (const [service, read] of [
      ['DeviceService', 'event.deviceResponse.availabilityResponse.available'],
      ['StateService', 'event.deviceResponse.stateResponse'],
      ['CarrierService', 'event.deviceResponse.changeIdentifierResponse.newId'],
      ['DeviceUsage', 'event.deviceResponse.alertServiceResponse.accountShare.accountGroupShare'],
    ] as const)
      expect(problems(`${read} != null`, eventType([service])), service).to.deep.equal([]);
  });

  it('is still an object taking any members in what an input takes', () => {
    expect(fromSchema({ type: 'object' }, true)).to.deep.equal({ k: 'object', fields: {}, open: true });
  });
});

describe('playbook types: a list of numbers', () => {
  it('is kept from the schema, and a known number none of it is found', () => {
    expect(fromSchema({ type: 'integer', enum: [1, 2] })).to.deep.equal({ k: 'int', enum: [1, 2] });
    const text = '${{ inputs.loud ? 3 : inputs.mode }}';
    const { spans } = findExpressions(text);
    expect(notAllowed(text, spans, [1, 2], false).map((k) => k.value)).to.deep.equal([3]);
    expect(notAllowed(text, spans, ['3'], false).map((k) => k.value)).to.deep.equal([3]);
    expect(
      notAllowed(
        '${{ inputs.loud ? 2 : 1 }}',
        findExpressions('${{ inputs.loud ? 2 : 1 }}').spans,
        [1, 2],
        false,
      ),
    ).to.deep.equal([]);
  });
});
