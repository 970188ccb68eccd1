/**
 * Constraints on declared inputs (pattern, minLength/maxLength, minimum/maximum, items, minItems/maxItems,
 * uniqueItems), held at the start of every run by coerceInputs, before anything is sent: a list of sensor ids
 * with one given twice was accepted, and the rollout configured that sensor twice. An array input's `items.type`
 * is also the type `validate` gives its elements in expressions.
 */
import { expect } from 'chai';
import { coerceInputs } from '../../src/runner/inputs.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import type { Playbook } from '../../src/playbook/schema.js';

const UUID = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
const A = '30ca92f4-cca3-467f-b9ef-100000000001';
const B = '1963d0fb-5aba-441c-88e1-100000000003';

const HEAD = `version: 1
name: constrained
on: { manual: true }
inputs:
  sensors:
    type: array
    items: { type: string, pattern: '${UUID}' }
    minItems: 1
    maxItems: 3
    uniqueItems: true
  region: { type: string, pattern: '^[a-z]+-[0-9]$', minLength: 4, maxLength: 8, default: eu-1 }
  port: { type: integer, minimum: 1024, maximum: 65535, default: 8080 }
  ratio: { type: number, minimum: 0, maximum: 1, default: 0.5 }
  levels: { type: array, items: { type: integer, minimum: 1, maximum: 5, enum: [1, 3, 5] }, default: [1] }
  word: { type: string, minLength: 2, default: 'é!' }
`;

function load(steps: string): ReturnType<typeof loadPlaybook> {
  return loadPlaybook(`${HEAD}steps:\n${steps}`, 'constrained.yaml');
}

const pb = (() => {
  const r = load(`  - id: hi\n    uses: log\n    with: { message: '\${{ inputs.sensors[0] }}' }\n`);
  expect(r.diagnostics).to.deep.equal([]);
  return r.playbook as Playbook;
})();

/** Why `playbook` refuses the inputs `given` at the start of a run; undefined when it takes them. */
function refusedBy(playbook: Playbook, given: Record<string, unknown>): string | undefined {
  try {
    coerceInputs(playbook, given);
  } catch (e) {
    return (e as Error).message;
  }
  return undefined;
}

function refusal(given: Record<string, unknown>): string {
  const why = refusedBy(pb, given);
  if (why === undefined) throw new Error(`${JSON.stringify(given)} was taken`);
  return why;
}

/** A playbook of one log step that declares `inputs` (YAML lines, indented two spaces), which must load clean. */
function declaring(name: string, inputs: string): Playbook {
  const r = loadPlaybook(
    `version: 1\nname: ${name}\non: { manual: true }\ninputs:\n${inputs}steps:\n  - id: hi\n    uses: log\n    with: { message: hi }\n`,
    `${name}.yaml`,
  );
  expect(r.diagnostics).to.deep.equal([]);
  return r.playbook as Playbook;
}

describe('input constraints at the start of a run (coerceInputs)', () => {
  it('takes values that keep every constraint, given as text or typed', () => {
    expect(coerceInputs(pb, { sensors: `["${A}", "${B}"]`, port: '1024', ratio: '1' })).to.deep.equal({
      sensors: [A, B],
      region: 'eu-1',
      port: 1024,
      ratio: 1,
      levels: [1],
      word: 'é!',
    });
    expect(coerceInputs(pb, { sensors: [A], region: 'us-2', levels: [5, 3, 5] })).to.deep.include({
      region: 'us-2',
      levels: [5, 3, 5],
    });
  });

  it('refuses a repeated item, naming the input, the item and uniqueItems', () => {
    expect(refusal({ sensors: `["${A}", "${B}", "${A}"]` })).to.equal(
      `input \`sensors\`: item 2 "${A}" is given twice (uniqueItems)`,
    );
  });

  it("refuses an item of another type or that breaks the items' constraints", () => {
    expect(refusal({ sensors: ['a', 1, 'a'] })).to.equal(
      `input \`sensors\`: item 0 "a" does not match \`${UUID}\` (items.pattern)`,
    );
    expect(refusal({ sensors: [A, 1] })).to.equal(
      'input `sensors`: item 1 (1) is not of type string (items.type)',
    );
    expect(refusal({ sensors: [A], levels: [1, 7] })).to.equal(
      'input `levels`: item 1 (7) is not one of 1, 3, 5 (items.enum)',
    );
    expect(refusal({ sensors: [A], levels: '[1.5]' })).to.equal(
      'input `levels`: item 0 (1.5) is not of type integer (items.type)',
    );
  });

  it('refuses too few or too many items', () => {
    expect(refusal({ sensors: [] })).to.equal('input `sensors`: has 0 items, fewer than 1 (minItems)');
    expect(refusal({ sensors: [A, B, A, B] })).to.equal(
      'input `sensors`: has 4 items, more than 3 (maxItems)',
    );
  });

  it('refuses a string that breaks its pattern or its length (in characters), and a number out of bounds', () => {
    const ok = { sensors: [A] };
    expect(refusal({ ...ok, region: 'EU-1' })).to.equal(
      'input `region`: "EU-1" does not match `^[a-z]+-[0-9]$` (pattern)',
    );
    expect(coerceInputs(pb, { ...ok, region: 'europe-1' })).to.include({ region: 'europe-1' });
    expect(refusal({ ...ok, region: 'europe-west-1' })).to.equal(
      'input `region`: "europe-west-1" does not match `^[a-z]+-[0-9]$` (pattern)',
    );
    // Matches the pattern: only its length refuses it.
    expect(refusal({ ...ok, region: 'abcdefgh-1' })).to.equal(
      'input `region`: "abcdefgh-1" is longer than 8 characters (maxLength)',
    );
    expect(refusal({ ...ok, word: 'é' })).to.equal(
      'input `word`: "é" is shorter than 2 characters (minLength)',
    );
    // One character: no "1 characters".
    const initial = declaring('initial', '  initial: { type: string, minLength: 1, maxLength: 1 }\n');
    expect(refusedBy(initial, { initial: '' })).to.equal('input `initial`: "" is empty (minLength)');
    expect(refusedBy(initial, { initial: 'xy' })).to.equal(
      'input `initial`: "xy" is longer than 1 character (maxLength)',
    );
    expect(refusal({ ...ok, port: '80' })).to.equal('input `port`: 80 is less than 1024 (minimum)');
    expect(refusal({ ...ok, port: 70000 })).to.equal('input `port`: 70000 is more than 65535 (maximum)');
    expect(refusal({ ...ok, ratio: '1.5' })).to.equal('input `ratio`: 1.5 is more than 1 (maximum)');
  });
});

describe('uniqueItems compares items as JSON Schema does', () => {
  const objects = declaring(
    'unique-objects',
    `  targets: { type: array, items: { type: object }, uniqueItems: true }
  weights: { type: array, uniqueItems: true }
  origin: { type: object, enum: [{ x: 0, y: 0 }] }
`,
  );
  const refused = (given: Record<string, unknown>) => refusedBy(objects, given);

  it('refuses objects that differ only in the order of their keys, at any depth', () => {
    expect(refused({ targets: '[{"a": 1, "b": 2}, {"b": 2, "a": 1}]' })).to.equal(
      'input `targets`: item 1 ({"b":2,"a":1}) is given twice (uniqueItems)',
    );
    expect(refused({ weights: [{ x: [1, { p: 1, q: 2 }] }, { x: [1, { q: 2, p: 1 }] }] })).to.equal(
      'input `weights`: item 1 ({"x":[1,{"q":2,"p":1}]}) is given twice (uniqueItems)',
    );
  });

  it('takes an enum value whose keys come in another order', () => {
    expect(coerceInputs(objects, { origin: '{"y": 0, "x": 0}' })).to.deep.equal({ origin: { y: 0, x: 0 } });
    expect(refused({ origin: { x: 0, y: 1 } })).to.equal(
      'input `origin`: {"x":0,"y":1} is not one of {"x":0,"y":0} (enum)',
    );
  });

  it('refuses 1 and 1.0 as one number, and takes what differs in a value or an order of elements', () => {
    expect(refused({ weights: '[1, 1.0]' })).to.equal(
      'input `weights`: item 1 (1) is given twice (uniqueItems)',
    );
    expect(
      refused({ targets: [{ a: 1 }, { a: 1, b: null }], weights: [[1, 2], [2, 1], '1', 1, true] }),
    ).to.equal(undefined);
  });
});

describe("an array input's items.minLength and items.maxLength", () => {
  const codes = declaring(
    'item-lengths',
    '  codes: { type: array, items: { type: string, minLength: 2, maxLength: 3 } }\n',
  );
  const refused = (given: unknown) => refusedBy(codes, { codes: given });

  it('takes items of those lengths in characters, and refuses one shorter or longer, naming it', () => {
    expect(refused(['ab', 'abc', 'éé!'])).to.equal(undefined);
    expect(refused(['ab', 'a'])).to.equal(
      'input `codes`: item 1 "a" is shorter than 2 characters (items.minLength)',
    );
    expect(refused('["abc", "abcd"]')).to.equal(
      'input `codes`: item 1 "abcd" is longer than 3 characters (items.maxLength)',
    );
  });
});

describe('input constraints in the expression type checker', () => {
  it("gives an array input's elements its items.type: a string element plus one is refused", () => {
    const r = load(`  - id: hi\n    uses: log\n    with: { message: '\${{ inputs.sensors[0] + 1 }}' }\n`);
    expect(r.diagnostics.map((d) => `${d.line}:${d.column} ${d.rule}: ${d.message}`)).to.deep.equal([
      '19:27 type: `+` cannot take a string `inputs.sensors[0]` and an int `1`',
    ]);
    const ints = load(`  - id: hi\n    uses: log\n    with: { message: '\${{ inputs.levels[0] + 1 }}' }\n`);
    expect(ints.diagnostics).to.deep.equal([]);
  });
});
