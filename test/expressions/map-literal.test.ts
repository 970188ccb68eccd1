/**
 * A map written in an expression (`{"a": 1}`) was untyped for validate: `[{"a": 1}].take(1)[0].b` passed and
 * failed every run ("No such key: b"), where the list literal beside it was typed. A map literal whose keys are
 * all string literals is now a closed object of its values' types, so that a member it does not have is refused
 * as any other's; with another key (`{inputs.k: 1}`, `{1: "a"}`) it is an open map, its other members read freely.
 * `has(m.b)` and `"b" in m` still ask whether it holds the key, and `m[key]` (a key known at run time) still looks
 * a key up. A key written in the expression (`m["b"]`) is a member as `m.b` is: refused alike, where it stood
 * unchecked and failed every run.
 */
import { expect } from 'chai';
import { compile } from '../../src/expressions/cel.js';
import { loadPlaybook } from '../../src/playbook/load.js';

const HEAD = [
  'version: 1',
  'name: map-literal',
  'on: { manual: true }',
  'inputs:',
  '  k: { type: string, default: a }',
  'steps:',
];

/** What validate says of `source` as a log step's message: `line:col message [rule]`. */
function diagnostics(source: string): string[] {
  const text = [...HEAD, '  - id: tell', '    uses: log', `    with: { message: '\${{ ${source} }}' }`];
  return loadPlaybook(text.join('\n'), 'map-literal.yaml').diagnostics.map(
    (d) => `${d.line}:${d.column} ${d.message} [${d.rule}]`,
  );
}

/** The first line of the error the evaluation raised, or its value. */
function outcome(source: string): unknown {
  try {
    return compile(source).evaluate({ inputs: { k: 'a' } });
  } catch (e) {
    return (e as Error).message.split('\n')[0];
  }
}

describe('expressions: a map written in the expression', () => {
  it('refuses a member it does not have, naming those it has', () => {
    for (const [source, message] of [
      ['[{"a": 1}].take(1)[0].b', '`…[0]` has no member `b` (it has `a`)'],
      ['{"id": 1, "kind": "imei"}.name', '`…` has no member `name` (it has `id`, `kind`)'],
      ['[{"id": 1}].map(d, d.idd)', '`d` has no member `idd` (did you mean `id`?)'],
      ['{}.a', '`…` has no member `a`: it has none'],
    ] as const) {
      const d = diagnostics(source);
      expect(d, source).to.have.length(1);
      expect(d[0], source)
        .to.include(message)
        .and.match(/ \[member\]$/);
      // What validate refuses, every run would have failed on.
      if (!source.includes('.map(')) expect(outcome(source), source).to.match(/^No such key/);
    }
  });

  it('refuses a key written in the expression that it does not have, as the member', () => {
    for (const [source, member] of [
      ['{"a": 1}["b"]', '{"a": 1}.b'],
      ['[{"a": 1}].take(1)[0]["b"]', '[{"a": 1}].take(1)[0].b'],
      ['{"id": 1, "kind": "imei"}["name"]', '{"id": 1, "kind": "imei"}.name'],
      ['[{"id": 1}].map(d, d["idd"])', '[{"id": 1}].map(d, d.idd)'],
      ['{}["a"]', '{}.a'],
      ['{"a": {"b": 1} }["a"]["c"]', '{"a": {"b": 1} }["a"].c'],
    ] as const) {
      const d = diagnostics(source);
      expect(d, source).to.have.length(1);
      // The member's rule and words, at the key as the member's are at its name (the expression is at column 27).
      const [asMember] = diagnostics(member);
      const words = (x: string | undefined) => x?.slice(x.indexOf(' ') + 1);
      expect(words(d[0]), source).to.equal(words(asMember));
      expect(d[0]?.split(' ')[0], source).to.equal(`9:${27 + source.lastIndexOf('["') + 1}`);
      expect(asMember?.split(' ')[0], member).to.equal(`9:${27 + member.lastIndexOf('.') + 1}`);
      if (!source.includes('.map(')) expect(outcome(source), source).to.match(/^No such key/);
    }
  });

  it('types its members by their values', () => {
    // cel-js's checker types the map itself, not a part of a list of them (a list of dyn to it: slices.ts).
    for (const source of [
      '[{"a": 1}].take(1)[0].a + "x"',
      '[{"a": "x"}].drop(0)[0].a == 1',
      '[{"l": [1]}].take(1)[0].l[0] + "x"',
    ]) {
      const d = diagnostics(source);
      expect(d, source).to.have.length(1);
      expect(d[0], source).to.match(/ \[type\]$/);
    }
  });

  it('reads freely what it may hold, and keeps has() and a lookup by key', () => {
    for (const source of [
      '{"a": 1}.a + 1',
      '[{"a": 1}].take(1)[0].a * 2',
      // Elements of two shapes: the members of either.
      '[{"a": 1}, {"b": 2}].map(m, has(m.b) ? m.b : m.a)',
      // has() asks whether it holds the key: false, not a mistake.
      '[{"a": 1}].map(m, has(m.b))',
      '[{"a": 1}].map(m, "b" in m)',
      '"b" in {"a": 1}',
      '[{"a": 1}, {"b": 2}].map(m, "b" in m ? m["b"] : m["a"])',
      '[{"a": 1}].exists(m, has(m.a))',
      // A lookup table, by a key known at run time, or one it has.
      '{"a": 1, "b": 2}[inputs.k] + 1',
      '{"a": 1, "b": 2}["a"] + 1',
      // Another key than a string literal: an open map.
      '{inputs.k: 1, "b": 2}.a',
      '{1: "x", "b": 2}.c',
      '{"a": {"b": 1} }.a.b + 1',
    ])
      expect(diagnostics(source), source).to.deep.equal([]);
    expect(outcome('[{"a": 1}, {"b": 2}].map(m, has(m.b) ? m.b : m.a)')).to.deep.equal([1, 2]);
    expect(outcome('[{"a": 1}].map(m, has(m.b))')).to.deep.equal([false]);
    expect(outcome('"b" in {"a": 1}')).to.equal(false);
    expect(outcome('[{"a": 1}, {"b": 2}].map(m, "b" in m ? m["b"] : m["a"])')).to.deep.equal([1, 2]);
    expect(outcome('{"a": 1, "b": 2}[inputs.k] + 1')).to.equal(2);
  });
});
