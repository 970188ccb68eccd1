/**
 * A value of another type where a schema takes one of a list of strings fails both the schema's `type` and its
 * `enum`: api/validate.ts says it once. The list, when the value's text is none of it (`level: 3`: quoting it
 * would not help); the type, when it is (`cacheMode: 0` where the string "0" is wanted), with that text, from
 * which validate says to quote it. Before, two problems came out, and validate merged them by matching their
 * messages' words.
 */
import { expect } from 'chai';
import { CATALOG } from '../../src/api/catalog.js';
import { check, checkInput } from '../../src/api/validate.js';
import { loadPlaybook } from '../../src/playbook/load.js';

const SCHEMA = {
  type: 'object',
  properties: {
    level: { type: 'string', enum: ['debug', 'info'] },
    mode: { type: 'string', enum: ['0', '1', '2'] },
  },
};

describe('validate: a non-string where a list of strings is wanted is one problem', () => {
  it('the list, when the value as text is none of it', () => {
    for (const level of [3, true, null, [1], { a: 1 }])
      expect(check(SCHEMA, { level }), JSON.stringify(level)).to.deep.equal([
        { path: '/level', message: 'level must be one of "debug", "info"' },
      ]);
  });

  it('the type, with the value as text, when that text is one of the list', () => {
    expect(check(SCHEMA, { mode: 0 })).to.deep.equal([
      { path: '/mode', message: 'mode must be string', asText: '0' },
    ]);
  });

  it('a rendered value says what it got, in one problem', () => {
    const rendered = { rendered: true };
    expect(check(SCHEMA, { level: 3 }, undefined, undefined, rendered)).to.deep.equal([
      { path: '/level', message: 'level must be one of "debug", "info", got a number' },
    ]);
    expect(check(SCHEMA, { mode: 0 }, undefined, undefined, rendered)).to.deep.equal([
      { path: '/mode', message: 'mode must be a string, got a number', asText: '0' },
    ]);
  });

  it("an action's input, as the client checks it before sending", () => {
    const input = {
      accountName: '0000123456-00001',
      deviceList: [{ id: '990000862471854', kind: 'imei' }],
      cacheMode: 7,
    };
    expect(checkInput(CATALOG['location.locate'], input)).to.deep.equal([
      { path: '/cacheMode', message: 'cacheMode must be one of "0", "1", "2"' },
    ]);
  });

  it('a string of the wrong value, or a number where any string is wanted, is as before', () => {
    expect(check(SCHEMA, { level: 'loud' })).to.deep.equal([
      { path: '/level', message: 'level must be one of "debug", "info"' },
    ]);
    expect(check({ type: 'object', properties: { s: { type: 'string' } } }, { s: 12 })).to.deep.equal([
      { path: '/s', message: 's must be string', asText: '12' },
    ]);
  });

  it('fleetbook validate gives one error for each, and says to quote the value a list takes', () => {
    const { diagnostics } = loadPlaybook(
      `version: 1
name: enums
on: { manual: true }
steps:
  - id: one
    uses: log
    with: { message: x, level: 3 }
  - id: two
    uses: location.locate
    with: { accountName: '0000123456-00001', deviceList: [{ id: '990000862471854', kind: imei }], cacheMode: 0 }
  - id: three
    uses: log
    with: { message: x, level: true }
`,
      'enums.yaml',
    );
    expect(diagnostics.map((d) => `${d.line}: ${d.message}`)).to.deep.equal([
      '7: log: level must be one of "debug", "info", "warn", "error"',
      "10: location.locate: cacheMode must be a string, and YAML reads 0 as a number: quote it ('0')",
      '13: log: level must be one of "debug", "info", "warn", "error"',
    ]);
  });
});
