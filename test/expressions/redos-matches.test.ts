/**
 * `matches()` runs on RE2 (issue 15, point 2). A backtracking engine took 51 s over
 * `"^([a-z]+-?)+$"` against a 31-character trigger name that does not match, and the daemon answered nothing
 * meanwhile. RE2 matches in time linear in the text, and refuses what it cannot run that way (backreferences,
 * lookaround): a literal pattern at `validate`, with its position, and a computed one when it is evaluated.
 */
import { expect } from 'chai';
import { checkExpression, compile } from '../../src/expressions/cel.js';
import { render } from '../../src/expressions/template.js';

/** The error an evaluation raised. */
function failure(template: string, context: Record<string, unknown>): Error {
  try {
    render(template, context);
  } catch (e) {
    return e as Error;
  }
  throw new Error(`${template} did not fail`);
}

describe('expressions: matches() runs on RE2', () => {
  const HOSTILE = '^([a-z]+-?)+$';
  const TRIGGER = `${'a'.repeat(30)}!`;

  // No tight wall-clock bound: RE2 answers in microseconds, a backtracking engine in 51 s, and mocha fails a test
  // that outlasts its timeout, even one that blocked the event loop throughout.
  it(`answers \`matches("${HOSTILE}")\` on a 31-character name that does not match`, function () {
    this.timeout(10_000);
    expect(TRIGGER).to.have.length(31);
    const filter = compile(`event.triggerName.matches("${HOSTILE}")`);
    expect(filter.evaluate({ event: { triggerName: TRIGGER } })).to.equal(false);
    expect(filter.evaluate({ event: { triggerName: 'overuse-demo' } })).to.equal(true);
  });

  it('keeps the CEL meaning: true when the pattern matches any part of the text, RE2 syntax', () => {
    const ctx = { event: { name: 'overuse-demo-2', imei: '354890061234567' } };
    expect(render('${{ event.name.matches("use") }}', ctx)).to.equal(true);
    expect(render('${{ event.name.matches("^use") }}', ctx)).to.equal(false);
    expect(render('${{ event.name.matches("^overuse-[a-z]+-\\\\d$") }}', ctx)).to.equal(true);
    expect(render('${{ event.imei.matches("^[0-9]{15}$") }}', ctx)).to.equal(true);
    expect(render('${{ event.name.matches("(?i)OVERUSE") }}', ctx)).to.equal(true);
    expect(render('${{ event.name.matches("\\\\p{Greek}") }}', ctx)).to.equal(false);
    expect(render('${{ matches(event.name, "demo") }}', ctx)).to.equal(true);
    expect(render('${{ ["a-1", "b", "c-3"].filter(x, x.matches("-\\\\d$")) }}', {})).to.deep.equal([
      'a-1',
      'c-3',
    ]);
  });

  it('takes a pattern computed at run time, and is linear over long text', function () {
    this.timeout(10_000);
    const ctx = { event: { text: `${'a'.repeat(200_000)}!`, pattern: HOSTILE } };
    expect(render('${{ event.text.matches(event.pattern) }}', ctx)).to.equal(false);
  });

  for (const [pattern, what] of [
    ['(a)\\\\1', 'a backreference'],
    ['a(?=b)', 'a lookahead'],
    ['a(?!b)', 'a negative lookahead'],
    ['(?<=a)b', 'a lookbehind'],
    ['[a-', 'an unclosed class'],
  ] as const) {
    it(`refuses a literal pattern with ${what} at load, with the pattern's offset`, () => {
      const source = `event.name.matches("${pattern}")`;
      const err = checkExpression(source, false);
      expect(err, source).to.not.equal(undefined);
      expect(err?.offset).to.equal(source.indexOf('"'));
      expect(err?.message).to.match(/RE2/);
      expect(err?.message).to.include(pattern.replaceAll('\\\\', '\\'));
      expect(checkExpression(`matches(event.name, "${pattern}")`, false)?.offset).to.equal(
        'matches(event.name, '.length,
      );
    });
  }

  it('fails the evaluation with a clear error when a computed pattern is one RE2 refuses', () => {
    const err = failure('${{ event.name.matches(event.pattern) }}', {
      event: { name: 'aa', pattern: '(a)\\1' },
    });
    expect(err.message).to.match(/RE2/);
    expect(err.message).to.include('(a)\\1');
  });

  it('refuses a receiver or a pattern that is not a string', () => {
    expect(checkExpression('(1).matches("a")', false)?.message).to.match(/matches/);
    expect(checkExpression('"a".matches(1)', false)?.message).to.match(/matches/);
    expect(failure('${{ event.n.matches("a") }}', { event: { n: 5 } }).message).to.match(/matches/);
  });
});
