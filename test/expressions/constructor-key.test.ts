/**
 * A key named like a member of JavaScript objects is plain data (issue 15, point 3). A DeviceUsage callback
 * with `"constructor": 1` beside the path a filter reads made the filter fail ("Unsupported type"): cel-js
 * tells a map from other values by `value.constructor`, and the data's own `constructor` hid Object's. The
 * filter then selected nothing, and the callback was dropped in silence.
 */
import { expect } from 'chai';
import { compile } from '../../src/expressions/cel.js';
import { render } from '../../src/expressions/template.js';

const KEYS = [
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'prototype',
  'length',
  'then',
];
const ROOTS = ['event', 'inputs', 'vars', 'steps'] as const;

/** A callback of the DeviceUsage shape, as JSON.parse gives it, with `key: 1` at `level` of its path. */
function callback(key: string, level: number): Record<string, unknown> {
  const triggerName = JSON.stringify({ triggerName: 'overuse-demo', accountName: '0000123456-00001' });
  const parts = [
    `{"requestId": "r-1", "deviceResponse": {"alertServiceResponse": ${triggerName}}}`,
    `{"requestId": "r-1", "deviceResponse": {"alertServiceResponse": ${triggerName}, "${key}": 1}}`,
    `{"requestId": "r-1", "deviceResponse": {"alertServiceResponse": {"${key}": 1, ${triggerName.slice(1)}}}`,
    `{"requestId": "r-1", "${key}": 1, "deviceResponse": {"alertServiceResponse": ${triggerName}}}`,
  ];
  return JSON.parse(parts[level] as string) as Record<string, unknown>;
}

/** The value, or the message of the error it raised. */
function attempt(template: unknown, context: Record<string, unknown>): unknown {
  try {
    return render(template, context);
  } catch (e) {
    return `error: ${(e as Error).message.split('\n')[0]}`;
  }
}

describe('expressions: any key of the data is plain data', () => {
  for (const key of KEYS) {
    it(`a filter reads the path beside a "${key}" key, at every level, in event, inputs, vars and steps`, () => {
      for (let level = 1; level <= 3; level++) {
        const data = callback(key, level);
        for (const root of ROOTS) {
          const filter = `\${{ ${root}.deviceResponse.alertServiceResponse.triggerName.startsWith("overuse") }}`;
          expect(attempt(filter, { [root]: data }), `${root} at level ${level}`).to.equal(true);
          const account = `\${{ ${root}.deviceResponse.alertServiceResponse.accountName + "" }}`;
          expect(attempt(account, { [root]: data })).to.equal('0000123456-00001');
        }
      }
    });

    it(`"${key}" itself reads as its value, is listed, counted, tested and returned like any key`, () => {
      const vars = JSON.parse(`{"m": {"${key}": 1, "other": 2}}`) as Record<string, unknown>;
      const ctx = { vars };
      expect(attempt(`\${{ vars.m["${key}"] + 1 }}`, ctx)).to.equal(2);
      expect(attempt(`\${{ "${key}" in vars.m }}`, ctx)).to.equal(true);
      expect(attempt('${{ size(vars.m) }}', ctx)).to.equal(2);
      expect(attempt('${{ vars.m.map(k, k) }}', ctx)).to.have.members([key, 'other']);
      expect(attempt('${{ vars.m.exists(k, vars.m[k] == 1) }}', ctx)).to.equal(true);
      expect(attempt('${{ vars.m == {"other": 2} }}', ctx)).to.equal(false);
      const whole = attempt('${{ [vars.m][0] }}', ctx) as Record<string, unknown>;
      expect(Object.keys(whole).sort()).to.deep.equal([key, 'other'].sort());
      expect(Object.getOwnPropertyDescriptor(whole, key)?.value).to.equal(1);
      expect(Object.getPrototypeOf(whole)).to.equal(Object.prototype);
      expect(attempt(`\${{ "${key}: " + string(vars.m["${key}"]) }}`, ctx)).to.equal(`${key}: 1`);
    });
  }

  it('reads `constructor` as a field when CEL allows the name, and its nested data', () => {
    const event = JSON.parse('{"a": {"constructor": {"prototype": {"x": 5}}, "b": 1}}') as Record<
      string,
      unknown
    >;
    expect(attempt('${{ event.a.constructor["prototype"].x + 1 }}', { event })).to.equal(6);
    expect(attempt('${{ has(event.a.constructor) }}', { event })).to.equal(true);
    expect(attempt('${{ (event.a.constructor) }}', { event })).to.deep.equal({ prototype: { x: 5 } });
    expect(({} as Record<string, unknown>).x).to.equal(undefined);
  });

  it('keeps such keys in what a map literal and a template build', () => {
    expect(attempt('${{ {"constructor": 1, "a": 2} }}', {})).to.deep.equal({ constructor: 1, a: 2 });
    expect(attempt('${{ {"constructor": 1}["constructor"] }}', {})).to.equal(1);
    const built = attempt('${{ {"__proto__": {"polluted": true}, "a": 1} }}', {}) as Record<string, unknown>;
    expect(Object.getOwnPropertyDescriptor(built, '__proto__')?.value).to.deep.equal({ polluted: true });
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    const value = JSON.parse('{"__proto__": "${{ 1 + 1 }}", "constructor": "${{ 2 }}"}') as Record<
      string,
      unknown
    >;
    const rendered = attempt(value as never, {}) as Record<string, unknown>;
    expect(Object.getOwnPropertyDescriptor(rendered, '__proto__')?.value).to.equal(2);
    expect(Object.getOwnPropertyDescriptor(rendered, 'constructor')?.value).to.equal(2);
    expect(Object.getPrototypeOf(rendered)).to.equal(Object.prototype);
  });

  it('sees a later change to data with such a key (the context is read live, not copied once)', () => {
    const vars: Record<string, unknown> = { constructor: 1 };
    const c = compile('size(vars)');
    expect(c.evaluate({ vars })).to.equal(1);
    vars.more = 2;
    expect(c.evaluate({ vars })).to.equal(2);
  });
});
