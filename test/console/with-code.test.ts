/**
 * `withCode` (console/ui.js) shows the daemon's backticked spans as code, in alerts, a run's and a step's error, a
 * step's reason or note, and a playbook's validation problems. It paired any two backticks of a line: a value the
 * daemon quotes that holds one (an input value "1`2" in a validation message) paired with the backtick that opens
 * the next span, and the message showed its value's tail and a stretch of words as code, and the span after it
 * between backticks. A span now opens after a space or punctuation and closes before one, as the messages write
 * them, and a backtick in a value the daemon quotes (as JSON writes a string) is text. The module as the browser
 * runs it: plain JavaScript, its output preact's elements, read back here as markup.
 */
import { expect } from 'chai';

const moduleUrl = new URL('../../console/ui.js', import.meta.url).href;
const { withCode } = (await import(moduleUrl)) as { withCode(text: string): unknown[] };

/** What `withCode` gives, as markup: its text as it is, each code span as `<code>…</code>`. */
function markup(text: string): string {
  return withCode(text)
    .map((part) => {
      if (typeof part === 'string') return part;
      const el = part as { type: unknown; props: { children: unknown } };
      expect(el.type, `an element of withCode(${JSON.stringify(text)})`).to.equal('code');
      expect(el.props.children, 'the text of a code span').to.be.a('string');
      return `<code>${el.props.children as string}</code>`;
    })
    .join('');
}

describe('console: code spans in the daemon’s messages', () => {
  it('pairs backticks as the messages write them, not inside a quoted value', () => {
    const cases: [string, string][] = [
      [
        'input `label`: "1`2" does not match `[a-z]` (pattern)',
        'input <code>label</code>: "1`2" does not match <code>[a-z]</code> (pattern)',
      ],
      [
        'input `label`: "`x` and \\"`\\"" does not match `^[0-9]+$` (pattern)',
        'input <code>label</code>: "`x` and \\"`\\"" does not match <code>^[0-9]+$</code> (pattern)',
      ],
      // A quote inside a span is the span's: a pattern, an expression.
      [
        'input `name`: "ab" does not match `^"[a-z]+"$` (pattern)',
        'input <code>name</code>: "ab" does not match <code>^"[a-z]+"$</code> (pattern)',
      ],
      [
        'pass it whole (`deviceList: "${{ steps.x.items }}"`), or use `steps.x.items`.',
        'pass it whole (<code>deviceList: "${{ steps.x.items }}"</code>), or use <code>steps.x.items</code>.',
      ],
      // A backtick inside a span, before a letter: the span goes on to the one that closes it.
      ['does not match `a`b` (pattern)', 'does not match <code>a`b</code> (pattern)'],
      [
        'run `fleetbook runs cancel 0194`: its holder stops it',
        'run <code>fleetbook runs cancel 0194</code>: its holder stops it',
      ],
      ['`if` was false', '<code>if</code> was false'],
      // No pair: as it is.
      ['a lone ` stays', 'a lone ` stays'],
      ['it`s not code', 'it`s not code'],
      ['an unclosed "quote with `code`', 'an unclosed "quote with <code>code</code>'],
      ['no span over\na line`s end `x', 'no span over\na line`s end `x'],
      ['<b>&amp;</b> `<i>`', '<b>&amp;</b> <code><i></code>'],
    ];
    expect(cases.map(([text]) => [text, markup(text)])).to.deep.equal(cases);
  });
});
