/**
 * Part of a list (canary rollouts: the first 50 devices, then the rest). CEL here had no slicing:
 * `items.slice(0, 5)` was refused as no function. Now `list.slice(from, to)` is cel-go's (the `ext.Lists`
 * library): indexes from 0, `from <= to <= size`, anything else an evaluation error, as `substring` does; and
 * `list.take(n)` / `list.drop(n)` take or leave the first n, as many as there are when there are fewer. A
 * negative count or index is an error, a non-integer argument is no overload (refused by validate when its type
 * is known). Slicing a list of the run's data gives its very elements, copies only the part it takes, and costs
 * that part's size in the expression budget.
 */
import { expect } from 'chai';
import { EvaluationError } from '@marcbachmann/cel-js';
import { checkExpression, compile } from '../../src/expressions/cel.js';
import { render } from '../../src/expressions/template.js';
import { ExpressionBudgetError } from '../../src/errors.js';
import { loadPlaybook } from '../../src/playbook/load.js';

const l = [1, 2, 3, 4, 5];
const ctx = { vars: { l, empty: [] as number[], n: 2, half: 2.5, whole: 2.0, name: 'x' } };
const value = (source: string, context: Record<string, unknown> = ctx) => compile(source).evaluate(context);

/** The first line of the error the evaluation raised. */
function failure(source: string, context: Record<string, unknown> = ctx): string {
  try {
    compile(source).evaluate(context);
  } catch (e) {
    return (e as Error).message.split('\n')[0] as string;
  }
  throw new Error(`${source} did not fail`);
}

describe('expressions: part of a list', () => {
  it('slice(from, to): the elements from `from` up to, not including, `to`', () => {
    expect(value('vars.l.slice(0, 2)')).to.deep.equal([1, 2]);
    expect(value('vars.l.slice(1, 4)')).to.deep.equal([2, 3, 4]);
    expect(value('vars.l.slice(0, 5)')).to.deep.equal(l);
    expect(value('vars.l.slice(5, 5)')).to.deep.equal([]);
    expect(value('vars.l.slice(2, 2)')).to.deep.equal([]);
    expect(value('[1, 2, 3].slice(1, 3)')).to.deep.equal([2, 3]);
    expect(value('vars.empty.slice(0, 0)')).to.deep.equal([]);
  });

  it('take(n) and drop(n): the first n, and those after them; all or none when the list has fewer', () => {
    expect(value('vars.l.take(2)')).to.deep.equal([1, 2]);
    expect(value('vars.l.drop(2)')).to.deep.equal([3, 4, 5]);
    expect(value('vars.l.take(0)')).to.deep.equal([]);
    expect(value('vars.l.drop(0)')).to.deep.equal(l);
    expect(value('vars.l.take(50)')).to.deep.equal(l);
    expect(value('vars.l.drop(50)')).to.deep.equal([]);
    expect(value('vars.l.take(9223372036854775807)')).to.deep.equal(l);
    expect(value('vars.empty.take(3)')).to.deep.equal([]);
    expect(value('vars.empty.drop(3)')).to.deep.equal([]);
    // The canary and the rest are the whole list, each element once, in order.
    expect(value('vars.l.take(vars.n) + vars.l.drop(vars.n) == vars.l')).to.equal(true);
    expect(value('vars.l.drop(1).take(3)')).to.deep.equal([2, 3, 4]);
    expect(value('size(vars.l.take(2))')).to.equal(2);
    expect(value('vars.l.take(2)[1] + 1')).to.equal(3);
  });

  it('refuses an index out of the list, a negative one, or from after to, saying which', () => {
    expect(failure('vars.l.slice(-1, 2)')).to.equal('slice(-1, 2): an index cannot be negative');
    expect(failure('vars.l.slice(0, -1)')).to.equal('slice(0, -1): an index cannot be negative');
    expect(failure('vars.l.slice(3, 2)')).to.equal('slice(3, 2): from (3) is after to (2)');
    expect(failure('vars.l.slice(0, 6)')).to.equal(
      'slice(0, 6): the list has 5 elements (take(6) takes the first 6, or all when there are fewer)',
    );
    expect(failure('vars.l.slice(6, 7)')).to.match(/^slice\(6, 7\): the list has 5 elements/);
    expect(failure('vars.empty.slice(0, 1)')).to.match(/^slice\(0, 1\): the list has 0 elements/);
    expect(failure('vars.l.take(-1)')).to.equal('take(-1): a count cannot be negative');
    expect(failure('vars.l.drop(-1)')).to.equal('drop(-1): a count cannot be negative');
    // As a CEL evaluation error: at the call, within the expression.
    try {
      compile('vars.l.take(-1)').evaluate(ctx);
    } catch (e) {
      expect(e).to.be.instanceOf(EvaluationError);
      expect((e as Error).message).to.include('vars.l.take(-1)');
    }
  });

  it('takes int arguments: a whole JSON number is one, a double or a string is no overload', () => {
    expect(value('vars.l.take(vars.whole)')).to.deep.equal([1, 2]);
    expect(failure('vars.l.take(vars.half)')).to.equal("found no matching overload for 'list.take(double)'");
    expect(failure('vars.l.slice(0, vars.name)')).to.equal(
      "found no matching overload for 'list.slice(int, string)'",
    );
    expect(failure('vars.name.take(1)')).to.equal("found no matching overload for 'string.take(int)'");
    // Known at load: refused by the checker, at the call.
    expect(checkExpression('[1, 2].slice(0.5, 1)', false)).to.deep.equal({
      offset: 0,
      message: "found no matching overload for 'list.slice(double, int)'",
    });
    expect(checkExpression('[1, 2].take("1")', false)?.message).to.equal(
      "found no matching overload for 'list.take(string)'",
    );
    expect(checkExpression('"ab".drop(1)', false)?.message).to.equal(
      "found no matching overload for 'string.drop(int)'",
    );
    expect(checkExpression('{"a": 1}.take(1)', false)?.message).to.equal(
      "found no matching overload for 'map.take(int)'",
    );
    // Too few arguments: said as such (test/expressions/functions.test.ts).
    expect(checkExpression('[1, 2].slice(1)', false)?.message).to.equal(
      '`slice` expects 2 arguments (from, to), got 1',
    );
    // Its elements are read as any list's.
    expect(checkExpression('[{"id": 1}].take(1)[0].id + 1', false)).to.equal(undefined);
    expect(checkExpression('inputs.l.take(inputs.n)', false)).to.equal(undefined);
  });

  it('gives the very elements of the run’s data, and copies only the part it takes', () => {
    const items = Array.from({ length: 1_000_000 }, (_, i) => ({ id: String(i), kind: 'imei' }));
    const big = { steps: { list: { items } } };
    const first = render('${{ steps.list.items.take(50) }}', big) as unknown[];
    expect(first).to.have.length(50);
    expect(first[0]).to.equal(items[0]);
    expect(first[49]).to.equal(items[49]);
    const rest = render('${{ steps.list.items.drop(50) }}', big) as unknown[];
    expect(rest).to.have.length(999_950);
    expect(rest[0]).to.equal(items[50]);
    expect(rest[999_949]).to.equal(items[999_999]);
    const window = render('${{ steps.list.items.slice(500000, 500003) }}', big) as unknown[];
    expect(window).to.deep.equal([items[500_000], items[500_001], items[500_002]]);
    expect(window[0]).to.equal(items[500_000]);
    // Chained, and under other operations: still elements of the data.
    expect(render('${{ steps.list.items.drop(10).take(2).map(d, d.id) }}', big)).to.deep.equal(['10', '11']);
    expect(render('${{ size(steps.list.items.drop(1)) }}', big)).to.equal(999_999);
    expect(items).to.have.length(1_000_000);
  });

  it('costs the size of what it builds: slicing in a loop that multiplies the data goes over the budget', () => {
    const inputs = { l: Array.from({ length: 1_000 }, (_, i) => i) };
    expect(render('${{ inputs.l.drop(1).take(998).size() }}', { inputs })).to.equal(998);
    for (const source of [
      'inputs.l.map(a, size(inputs.l.drop(0)))',
      'inputs.l.map(a, inputs.l.take(1000))',
    ]) {
      expect(() => render(`\${{ ${source} }}`, { inputs }), source).to.throw(ExpressionBudgetError);
    }
  });
});

describe('validate: part of a list', () => {
  const head = [
    'version: 1',
    'name: canary',
    'on: { manual: true }',
    'inputs:',
    '  account: { type: string, required: true }',
    '  canary: { type: integer }',
    '  mode: { type: string }',
    'steps:',
    '  - id: devices',
    '    uses: devices.list',
    "    with: { accountName: '${{ inputs.account }}' }",
  ];
  const diagnostics = (...steps: string[]) =>
    loadPlaybook([...head, ...steps].join('\n'), 'canary.yaml').diagnostics.map(
      (d) => `${d.line}:${d.column} ${d.message} [${d.rule}]`,
    );

  it('accepts a canary: the first n of a listing, then the rest, each the list device actions take', () => {
    expect(
      diagnostics(
        '  - id: canary',
        '    forEach:',
        "      items: '${{ steps.devices.items.take(inputs.canary) }}'",
        '      steps:',
        '        - id: one',
        '          uses: devices.suspend',
        "          with: { accountName: '${{ inputs.account }}', devices: '${{ [item] }}' }",
        '  - id: window',
        '    uses: devices.suspend',
        "    with: { accountName: '${{ inputs.account }}', devices: '${{ steps.devices.items.slice(2, 4) }}' }",
        '  - id: rest',
        '    uses: devices.suspend',
        "    with: { accountName: '${{ inputs.account }}', devices: '${{ steps.devices.items.drop(4) }}' }",
        '  - id: tell',
        '    uses: log',
        "    with: { message: '${{ steps.devices.items.take(1)[0].id }} ${{ size(steps.devices.items.drop(1)) }}' }",
      ),
    ).to.deep.equal([]);
  });

  it('types the part as a list of the same elements, and refuses arguments and lists of the wrong type', () => {
    expect(
      diagnostics(
        '  - id: tell',
        '    if: ${{ steps.devices.items.take(1) }}',
        '    uses: log',
        '    with:',
        "      message: '${{ steps.devices.items.take(1)[0].idd }} ${{ steps.devices.items.drop(inputs.mode) }}'",
        '  - id: more',
        '    uses: log',
        "    with: { message: '${{ inputs.account.take(2) }} ${{ steps.devices.items.slice(0, 1.5) }}' }",
      ),
    ).to.deep.equal([
      '13:9 `if` takes a bool; this expression gives a list of maps [type]',
      '16:52 `…[0]` has no member `idd` (did you mean `id` or `kind`?) [member]',
      '16:88 `drop` takes an int; `inputs.mode` is a string [type]',
      '19:27 `take` takes part of a list; `inputs.account` is a string [type]',
      '19:86 `slice` takes an int; `1.5` is a double [type]',
    ]);
  });

  it('keeps the elements of a list written in the expression: a part of it is refused what they are refused', () => {
    // The slices are registered as of plain lists (slices.ts): cel-js's checker sees the part as a list of dyn.
    // What it refuses of the whole list, validate refuses of the part.
    const tell = (message: string) => [
      '  - id: tell',
      '    uses: log',
      `    with: { message: '${message}' }`,
    ];
    for (const source of [
      '[1, 2][0] + "a"',
      '[1, 2].take(1)[0] + "a"',
      '[1, 2].slice(0, 1)[0] == "x"',
      '[1, 2].drop(1).map(n, n + "a")',
      '[[1], [2]].take(1)[0][0] + "a"',
      '[inputs.account].take(1)[0] + 1',
      '["a"].drop(0)[0].size',
      'inputs.account.id',
    ]) {
      const d = diagnostics(...tell(`\${{ ${source} }}`));
      expect(d, source).to.have.length(1);
      expect(d[0], source).to.match(/ \[(type|expression|member)\]$/);
    }
    // Elements of mixed types (a list of dyn), or a part of the run's data, are read freely.
    for (const source of [
      '[1, "a"].take(1)[0] + 1',
      '[1, 2.5].take(1)[0] + 1',
      '[inputs.canary, 1].take(1)[0] * 2',
      '[{"id": 1}].take(1)[0].id + 1',
      'steps.devices.items.take(1)[0].id + "x"',
    ])
      expect(diagnostics(...tell(`\${{ ${source} }}`)), source).to.deep.equal([]);
  });
});
