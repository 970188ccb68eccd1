/**
 * CEL expressions as product.md section 2 defines them: `${{ ... }}` in strings, integers that behave as
 * integers, a whole-scalar expression keeping its type, interpolation into longer strings, `}}` inside a CEL
 * string, no way out of the sandbox, and no copy of a large context.
 */
import { expect } from 'chai';
import { checkExpression, compile, CONTEXT_VARIABLES, LOOP_VARIABLES } from '../../src/expressions/cel.js';
import { findExpressions, render } from '../../src/expressions/template.js';

/** The result, or the error it raised. */
function attempt(template: string, context: Record<string, unknown>): { value?: unknown; error?: Error } {
  try {
    return { value: render(template, context) };
  } catch (e) {
    return { error: e as Error };
  }
}

describe('expressions: integers (product.md section 2)', () => {
  it('`event.count + 1` with a JSON integer gives the number 6', () => {
    const count = JSON.parse('{"count": 5}') as Record<string, unknown>;
    const v = render('${{ event.count + 1 }}', { event: count });
    expect(v).to.equal(6);
    expect(v).to.be.a('number');
  });

  it('`x > 5` compares a JSON integer with an int literal', () => {
    expect(render('${{ vars.x > 5 }}', { vars: { x: 7 } })).to.equal(true);
    expect(render('${{ vars.x > 5 }}', { vars: { x: 5 } })).to.equal(false);
    expect(render('${{ vars.x >= 5 && vars.x < 10 }}', { vars: { x: 5 } })).to.equal(true);
    expect(render('${{ vars.x > 5 }}', { vars: { x: 2.5 } })).to.equal(false);
  });

  it('keeps integer arithmetic: sums, products, comparisons with other JSON integers, in lists too', () => {
    const ctx = {
      steps: { s: { devices: { total: 10, failed: 3, succeeded: 7 } } },
      vars: { list: [1, 2, 3] },
    };
    expect(render('${{ steps.s.devices.failed * 100 / steps.s.devices.total }}', ctx)).to.equal(30);
    expect(
      render('${{ steps.s.devices.succeeded + steps.s.devices.failed == steps.s.devices.total }}', ctx),
    ).to.equal(true);
    expect(render('${{ vars.list.map(x, x * 2) }}', ctx)).to.deep.equal([2, 4, 6]);
    expect(render('${{ vars.list[1] + 1 }}', ctx)).to.equal(3);
    expect(render('${{ size(vars.list) + 1 }}', ctx)).to.equal(4);
  });

  // Fails today: the integer boundary's proxy also turns an array's `length` into a BigInt, so cel-js's list
  // membership and concatenation throw a TypeError and list equality answers false.
  it('lists from the context behave as CEL lists: membership, equality, concatenation', () => {
    const ctx = { vars: { imeis: ['354890061234567', '354890061234568'], counts: [1, 2] } };
    expect(attempt('${{ "354890061234567" in vars.imeis }}', ctx)).to.deep.equal({ value: true });
    expect(attempt('${{ 3 in vars.counts }}', ctx)).to.deep.equal({ value: false });
    expect(attempt('${{ vars.counts == [1, 2] }}', ctx)).to.deep.equal({ value: true });
    expect(attempt('${{ vars.counts + [3] }}', ctx)).to.deep.equal({ value: [1, 2, 3] });
    expect(attempt('${{ vars.imeis.filter(i, !(i in ["354890061234568"])) }}', ctx)).to.deep.equal({
      value: ['354890061234567'],
    });
  });

  it('mixes a JSON number that is not whole with ints in + - * /, as a double: it works for 2.5 as for 3', () => {
    const c = compile('event.usage * 2 + 1 - 0.5 / 2');
    expect(c.evaluate({ event: { usage: 3 } })).to.equal(6.75);
    expect(c.evaluate({ event: { usage: 2.5 } })).to.equal(5.75);
    expect(render('${{ event.usage + 1 }}', { event: { usage: 1.5 } })).to.equal(2.5);
    expect(render('${{ 1 - event.usage }}', { event: { usage: 0.25 } })).to.equal(0.75);
    // Between ints, int arithmetic stays: 7 / 2 is 3.
    expect(render('${{ event.usage / 2 }}', { event: { usage: 7 } })).to.equal(3);
    expect(render('${{ event.usage / 2 }}', { event: { usage: 7.5 } })).to.equal(3.75);
  });

  it('compiles once and evaluates against any context', () => {
    const c = compile('event.count + 1');
    expect(c.evaluate({ event: { count: 1 } })).to.equal(2);
    expect(c.evaluate({ event: { count: 41 } })).to.equal(42);
  });
});

describe('expressions: types and interpolation', () => {
  it('a whole-scalar expression keeps its type: list, map, bool, number, string, null', () => {
    const ctx = { vars: { ids: [{ id: '354890061234567', kind: 'imei' }], flag: true } };
    expect(render('${{ [1, 2, 3] }}', {})).to.deep.equal([1, 2, 3]);
    expect(render('${{ {"a": 1, "b": [true, "x"]} }}', {})).to.deep.equal({ a: 1, b: [true, 'x'] });
    expect(render('${{ vars.ids }}', ctx)).to.deep.equal([{ id: '354890061234567', kind: 'imei' }]);
    expect(render('${{ vars.flag }}', ctx)).to.equal(true);
    expect(render('${{ 1 < 2 }}', {})).to.equal(true);
    expect(render('${{ 40 + 2 }}', {})).to.equal(42);
    expect(render('${{ 1.5 }}', {})).to.equal(1.5);
    expect(render('${{ "text" }}', {})).to.equal('text');
    expect(render('${{ null }}', {})).to.equal(null);
  });

  it('whitespace inside the braces does not matter; outside it makes the string a template', () => {
    expect(render('${{1+1}}', {})).to.equal(2);
    expect(render('${{   1 + 1   }}', {})).to.equal(2);
    expect(render(' ${{ 1 + 1 }}', {})).to.equal(' 2');
  });

  it('interpolates expressions inside a longer string', () => {
    const ctx = { run: { id: 'r-1', date: '2026-11-22' }, steps: { s: { devices: { succeeded: 3 } } } };
    expect(render('reports/${{ run.date }}-locations.csv', ctx)).to.equal('reports/2026-11-22-locations.csv');
    expect(render('run ${{ run.id }}: ${{ steps.s.devices.succeeded }} suspended', ctx)).to.equal(
      'run r-1: 3 suspended',
    );
    // Non-strings are written as JSON, null as nothing.
    expect(render('list ${{ [1, "a"] }} map ${{ {"k": true} }} none[${{ null }}]', {})).to.equal(
      'list [1,"a"] map {"k":true} none[]',
    );
  });

  it('renders every string of a nested value and leaves other values alone', () => {
    const value = { a: '${{ 1 + 1 }}', b: ['x ${{ "y" }}', 3, false, null], c: { d: 'plain' } };
    expect(render(value, {})).to.deep.equal({ a: 2, b: ['x y', 3, false, null], c: { d: 'plain' } });
  });

  it('`}}` inside a CEL string literal does not end the expression', () => {
    expect(render('${{ "a}}b" }}', {})).to.equal('a}}b');
    expect(render('${{ \'x}}\' + "}}" }}', {})).to.equal('x}}}}');
    expect(render('before ${{ "}}" }} after ${{ 1 }}', {})).to.equal('before }} after 1');
    expect(render('${{ "escaped \\" }} quote" }}', {})).to.equal('escaped " }} quote');
    const { spans } = findExpressions('a ${{ "}}" }} b ${{ 2 }}');
    expect(spans.map((s) => s.source)).to.deep.equal(['"}}"', '2']);
  });

  it('item and index exist only in a forEach body', () => {
    expect(checkExpression('item.id', false)?.message).to.match(/item/);
    expect(checkExpression('index + 1', false)?.message).to.match(/index/);
    expect(checkExpression('item.id + string(index)', true)).to.equal(undefined);
    expect(render('${{ item.id }}#${{ index }}', { item: { id: 'a' }, index: 2 }, true)).to.equal('a#2');
    expect([...LOOP_VARIABLES]).to.deep.equal(['item', 'index']);
    expect([...CONTEXT_VARIABLES]).to.have.members([
      'event',
      'inputs',
      'vars',
      'steps',
      'run',
      'secrets',
      'env',
    ]);
  });

  it('type-checks at load time and gives the offset of the error', () => {
    expect(checkExpression('event.count + 1', false)).to.equal(undefined);
    expect(checkExpression('1 + "a"', false)).to.include({ offset: 0 });
    const unknown = checkExpression('event.a && nope', false);
    expect(unknown?.message).to.match(/nope/);
    expect(unknown?.offset).to.equal(11);
    expect(checkExpression('1 +', false)?.message).to.be.a('string');
  });
});

describe('expressions: the sandbox', () => {
  const ctx = () => ({
    event: { accountName: '0000123456-00001' },
    vars: { list: [1, 2], map: { a: 1 } },
    steps: { s: { items: [{ id: 'x' }] } },
    secrets: { TOKEN: 'secret' },
    env: {},
  });

  const escapes = [
    '${{ vars.constructor }}',
    '${{ vars.constructor.constructor("return process")() }}',
    '${{ vars.__proto__ }}',
    '${{ vars["__proto__"] }}',
    '${{ vars.toString }}',
    '${{ vars.hasOwnProperty }}',
    '${{ vars.map.constructor }}',
    '${{ vars.list.constructor }}',
    '${{ steps.s.items.constructor.prototype }}',
    '${{ event.accountName.constructor }}',
    '${{ "".constructor }}',
    '${{ process }}',
    '${{ process.env }}',
    '${{ require("child_process") }}',
    '${{ import("fs") }}',
    '${{ globalThis }}',
    '${{ this }}',
    '${{ Function("return 1")() }}',
    '${{ eval("1") }}',
  ];
  for (const template of escapes) {
    it(`${template} raises an error or yields plain data`, () => {
      const { value, error } = attempt(template, ctx());
      if (error) {
        // A CEL error, raised on purpose; not a JavaScript TypeError from reaching into the host.
        expect(['EvaluationError', 'ParseError'], error.message).to.include(error.name);
        return;
      }
      // Whatever comes back is plain JSON-like data: no function, no prototype object, no process.
      const seen = new Set<unknown>();
      const plain = (v: unknown): void => {
        if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) return;
        expect(typeof v, template).to.equal('object');
        if (seen.has(v)) return;
        seen.add(v);
        expect(v).to.not.equal(Object.prototype);
        expect(v).to.not.equal(process);
        expect(v).to.not.equal(globalThis);
        for (const x of Object.values(v as object)) plain(x);
      };
      plain(value);
    });
  }

  it('cannot pollute Object.prototype through map literals or data keys', () => {
    const before = Object.getOwnPropertyNames(Object.prototype).sort();
    const v = render('${{ {"__proto__": {"polluted": true}, "ok": 1 } }}', {}) as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).to.equal(Object.prototype);
    expect(v.ok).to.equal(1);
    attempt('${{ {"constructor": {"prototype": {"polluted": true} } } }}', {});
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).to.deep.equal(before);
  });

  it('reads a `__proto__` key of JSON data as plain data', () => {
    const vars = JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>;
    expect(render('${{ vars["__proto__"].x }}', { vars })).to.equal(1);
  });

  it('sees no inherited members of context objects', () => {
    const vars = Object.create({ inherited: 1 }) as Record<string, unknown>;
    expect(attempt('${{ vars.inherited }}', { vars }).error).to.be.instanceOf(Error);
    expect(attempt('${{ has(vars.inherited) }}', { vars }).value).to.not.equal(true);
  });

  it('does not hand out functions found in the context', () => {
    const { value, error } = attempt('${{ vars.f }}', { vars: { f: () => 'called' } });
    expect(error ?? value).to.not.be.a('function');
    expect(value).to.not.equal('called');
  });

  it('has no string functions that build code or unbounded data', () => {
    expect(attempt('${{ "x".repeat(1000000000) }}', {}).error).to.be.instanceOf(Error);
  });
});

describe('expressions: member paths read directly', () => {
  // `(path)` is the same expression, evaluated by CEL itself: the direct read must give what CEL gives.
  const both = (path: string, context: Record<string, unknown>) => [
    attempt(`\${{ ${path} }}`, context),
    attempt(`\${{ (${path}) }}`, context),
  ];
  const vars = JSON.parse(
    '{"s": "text", "n": 5, "d": 2.5, "t": true, "z": null, "o": {"a": {"b": [1, 2]}}, "l": [1, 2], "big": 9007199254740993}',
  ) as Record<string, unknown>;

  it('gives the value CEL gives, for every kind of JSON value', () => {
    for (const path of [
      'vars.s',
      'vars.n',
      'vars.d',
      'vars.t',
      'vars.z',
      'vars.o',
      'vars.o.a.b',
      'vars.l',
      'vars.big',
    ]) {
      const [direct, cel] = both(path, { vars });
      expect(direct!.error, path).to.equal(undefined);
      expect(direct!.value, path).to.deep.equal(cel!.value);
      expect(typeof direct!.value, path).to.equal(typeof cel!.value);
    }
    // The very object of the context, as CEL gives it.
    expect(render('${{ vars.o }}', { vars })).to.equal(vars.o);
    expect(Object.is(render('${{ vars.m }}', { vars: { m: -0 } }), 0)).to.equal(true);
  });

  it('leaves to CEL what is not a field of an object: missing, inherited, of a list, or a function', () => {
    for (const path of ['vars.missing', 'vars.l.length', 'vars.s.length', 'vars.z.a', 'nothing.here']) {
      const [direct, cel] = both(path, { vars });
      // The same error; its message quotes the source, which differs by the parentheses.
      const first = (e?: Error) => e?.message.split('\n')[0];
      expect(first(direct!.error), path).to.be.a('string').and.equal(first(cel!.error));
    }
    expect(
      attempt('${{ vars.inherited }}', { vars: Object.create({ inherited: 1 }) }).error,
    ).to.be.instanceOf(Error);
    const f = attempt('${{ vars.f }}', { vars: { f: () => 'called' } });
    expect(f.error ?? f.value).to.not.be.a('function');
  });
});

describe('expressions: a large context is not copied', () => {
  const items = Array.from({ length: 100_000 }, (_, i) => ({
    id: String(354890060000000 + i),
    kind: 'imei',
  }));
  const ctx = { steps: { d: { items, output: { devices: items } } } };

  it('`size(steps.d.items)` is 100,000', () => {
    expect(render('${{ size(steps.d.items) }}', ctx)).to.equal(100_000);
  });

  it('`${{ steps.d.items }}` returns the very array of the context, not a copy', () => {
    expect(render('${{ steps.d.items }}', ctx)).to.equal(items);
    expect(render('${{ steps.d.output.devices }}', ctx)).to.equal(items);
    expect(render('${{ steps.d.items[99999] }}', ctx)).to.equal(items[99_999]);
    expect(render('${{ steps.d.output }}', ctx)).to.equal(ctx.steps.d.output);
  });

  it('leaves the context unchanged', () => {
    render('${{ steps.d.items.filter(x, x.id == "354890060000007") }}', ctx);
    expect(items).to.have.length(100_000);
    expect(items[7]).to.deep.equal({ id: '354890060000007', kind: 'imei' });
    expect(Object.keys(ctx.steps.d)).to.deep.equal(['items', 'output']);
  });
});
