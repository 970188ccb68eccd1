/**
 * A function CEL does not have (`reverse`, `upper`, `first`) was refused as "found no matching overload for
 * 'list.reverse()'", as if the arguments were wrong. It is now said to be no function of the expressions,
 * with the functions there are; the list is the one docs/playbook.md gives, and each of its names is one the
 * expressions have.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { checkExpression, compile } from '../../src/expressions/cel.js';
import { FUNCTIONS } from '../../src/expressions/functions.js';
import { loadPlaybook } from '../../src/playbook/load.js';

describe('expressions: a function CEL does not have', () => {
  it('is named as no function, with the functions there are', () => {
    for (const [source, name] of [
      ['[1, 2].reverse()', 'reverse'],
      ['"a".upper()', 'upper'],
      ['first([1])', 'first'],
      ['inputs.account.toLowerCase()', 'toLowerCase'],
    ] as const) {
      const e = checkExpression(source, false);
      expect(e?.message, source).to.match(
        new RegExp(`^\`${name}\` is not a function of playbook expressions`),
      );
      expect(e?.message, source).to.include('size, contains').and.include('docs/playbook.md#functions');
    }
  });

  it('keeps the checker’s words for a function there is, given the wrong arguments', () => {
    expect(checkExpression('"a".contains(1)', false)?.message).to.equal(
      "found no matching overload for 'string.contains(int)'",
    );
  });

  it('says a function given more or fewer arguments than it takes so, with its parameters', () => {
    for (const [source, message] of [
      ['[1, 2].take()', '`take` expects 1 argument (n), got 0'],
      ['[1, 2].take(1, 2)', '`take` expects 1 argument (n), got 2'],
      ['inputs.l.drop(1, 2)', '`drop` expects 1 argument (n), got 2'],
      ['[1, 2].slice(1)', '`slice` expects 2 arguments (from, to), got 1'],
      ['"abc".substring(1, 2, 3)', '`substring` expects 1 argument (start) or 2 (start, end), got 3'],
      ['size()', '`size` expects 1 argument (value), got 0'],
      ['inputs.s.size(1)', '`size` expects no arguments, got 1'],
      ['["a"].join(",", 1)', '`join` expects no arguments or 1 (separator), got 2'],
      [
        '[1].map(inputs)',
        '`map` expects 2 arguments (variable, expression) or 3 (variable, filter, expression), got 1',
      ],
      [
        'timestamp("2026-01-01T00:00:00Z").getHours("UTC", 1)',
        '`getHours` expects no arguments or 1 (timezone), got 2',
      ],
      // A getter of a duration takes no argument, of a timestamp none or a time zone: each says its own.
      ['duration("1h").getHours(1)', '`getHours` expects no arguments, got 1'],
      ['duration("1h").getMilliseconds("UTC")', '`getMilliseconds` expects no arguments, got 1'],
      [
        'timestamp("2026-01-01T00:00:00Z").getMinutes("UTC", 1)',
        '`getMinutes` expects no arguments or 1 (timezone), got 2',
      ],
      // Of a value whose type is not known before the run, what either takes.
      ['inputs.x.getHours(1, 2)', '`getHours` expects no arguments or 1 (timezone), got 2'],
      ['inputs.s.matches()', '`matches` expects 1 argument (regex), got 0'],
      ['matches("a")', '`matches` expects 2 arguments (text, regex), got 1'],
    ] as const) {
      expect(checkExpression(source, false)?.message, source).to.equal(message);
    }
    // As many as it takes, of the wrong types: the checker's words.
    expect(checkExpression('[1, 2].take("1")', false)?.message).to.equal(
      "found no matching overload for 'list.take(string)'",
    );
  });

  it('says a getter called on a value it does not apply to what it applies to, and what that value has', () => {
    const durationGetters = 'a duration has getHours, getMinutes, getSeconds, getMilliseconds';
    for (const [source, message] of [
      [
        'duration("1h").getDayOfWeek()',
        `\`getDayOfWeek\` applies to a timestamp, not a duration; ${durationGetters}`,
      ],
      [
        'duration("1h").getFullYear("UTC")',
        `\`getFullYear\` applies to a timestamp, not a duration; ${durationGetters}`,
      ],
      ['"2026-01-01".getMonth()', '`getMonth` applies to a timestamp, not a string; a string has no getters'],
      [
        '[1].getHours()',
        '`getHours` applies to a timestamp or a duration, not a list; a list has no getters',
      ],
    ] as const)
      expect(checkExpression(source, false)?.message, source).to.equal(message);
    // At run time, of a value whose type the check did not know: the same words.
    let error: Error | undefined;
    try {
      compile('dyn(duration(inputs.s)).getDayOfWeek()').evaluate({ inputs: { s: '1h' } });
    } catch (e) {
      error = e as Error;
    }
    expect(error?.message.split('\n')[0]).to.equal(
      `\`getDayOfWeek\` applies to a timestamp, not a duration; ${durationGetters}`,
    );
  });

  it('says so when the evaluation finds it, at the call', () => {
    for (const [source, message] of [
      ['inputs.l.take(1, 2)', '`take` expects 1 argument (n), got 2'],
      ['inputs.s.substring()', '`substring` expects 1 argument (start) or 2 (start, end), got 0'],
      ['dyn(duration(inputs.s)).getSeconds(1)', '`getSeconds` expects no arguments, got 1'],
    ] as const) {
      let error: Error | undefined;
      try {
        compile(source).evaluate({ inputs: { l: [1, 2], s: source.includes('duration') ? '1h' : 'ab' } });
      } catch (e) {
        error = e as Error;
      }
      const [first, ...frame] = error?.message.split('\n') ?? [];
      expect(first, source).to.equal(message);
      expect(frame.join('\n'), source).to.include(source);
    }
  });

  it('is said at its line and column by validate', () => {
    const text = [
      'version: 1',
      'name: last-first',
      'on: { manual: true }',
      'steps:',
      '  - id: devices',
      '    uses: devices.list',
      "    with: { accountName: '0583964556-00001' }",
      '  - id: suspend',
      '    uses: devices.suspend',
      '    with:',
      "      accountName: '0583964556-00001'",
      '      devices: ${{ steps.devices.items.reverse() }}',
    ].join('\n');
    const d = loadPlaybook(text, 'last-first.yaml').diagnostics.filter((x) => x.severity === 'error');
    expect(d.map((x) => `${x.line}:${x.column} ${x.message.split(':')[0]}`)).to.deep.equal([
      '12:20 invalid expression',
    ]);
    expect(d[0]?.message).to.include('`reverse` is not a function of playbook expressions');
  });

  it('lists only functions the expressions have, each in docs/playbook.md', () => {
    const docs = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'playbook.md'), 'utf8');
    const section = docs.slice(docs.indexOf('### Functions'));
    for (const f of FUNCTIONS) {
      expect(section, f.name).to.include(`\`${f.name}\``);
      expect(checkExpression(f.example, false), `${f.name}: ${f.example}`).to.equal(undefined);
    }
  });
});
