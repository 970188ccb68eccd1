/**
 * The run form's help text says what each input's constraints take (console/pages/start-run.js), from what the
 * playbooks API serves: the daemon refuses a value that breaks one, and the form says which before it is typed.
 * The page's module as the browser runs it: plain JavaScript.
 */
import { expect } from 'chai';

const moduleUrl = new URL('../../console/pages/start-run.js', import.meta.url).href;
const { constraintNotes, htmlPattern } = (await import(moduleUrl)) as {
  constraintNotes(spec: unknown): string[];
  htmlPattern(pattern: unknown): string | undefined;
};

describe('console: the run form says what an input takes', () => {
  it('gives each constraint in words', () => {
    const uuid = '^[0-9a-f-]{36}$';
    expect(
      constraintNotes({
        type: 'array',
        items: { type: 'string', pattern: uuid },
        minItems: 1,
        uniqueItems: true,
      }),
    ).to.deep.equal(['at least 1 item', `each string matching ${uuid}`, 'no item twice']);
    expect(constraintNotes({ type: 'integer', minimum: 1024, maximum: 65535 })).to.deep.equal([
      '1024 to 65535',
    ]);
    expect(constraintNotes({ type: 'string', pattern: '^[a-z]+$', maxLength: 8 })).to.deep.equal([
      'matching ^[a-z]+$',
      'at most 8 characters',
    ]);
    expect(
      constraintNotes({ type: 'array', items: { type: 'integer', enum: [1, 3] }, maxItems: 2 }),
    ).to.deep.equal(['at most 2 items', 'each integer one of 1, 3']);
    expect(
      constraintNotes({
        type: 'array',
        items: { type: 'string', pattern: '^[A-Z]+$', minLength: 2, maxLength: 8 },
      }),
    ).to.deep.equal(['each string matching ^[A-Z]+$, 2 to 8 characters']);
    expect(constraintNotes({ type: 'array', items: { type: 'string', maxLength: 1 } })).to.deep.equal([
      'each string at most 1 character',
    ]);
    expect(constraintNotes({ type: 'string', enum: ['a', 'b'] })).to.deep.equal(['one of "a", "b"']);
    expect(constraintNotes({ type: 'string', description: 'x' }), 'none: nothing said').to.deep.equal([]);
  });

  it("sets a field's pattern only where the browser reads it as RE2 does", () => {
    const uuid = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
    const same = [uuid, '^[a-z]+-[0-9]$', '^(?:eu|us)-\\d+$', '^\\w+\\$x$', '^[^a-c]*$', '^a\\.b$'];
    expect(same.map((p) => htmlPattern(p))).to.deep.equal(same);
    const otherwise = [
      '[a-z]+', // a match anywhere for RE2, the whole text for the browser
      '^a|b$', // either end for RE2
      '^a\\$', // a literal dollar: not anchored
      '^\\S+$', // JavaScript's \S leaves out every Unicode space
      '^.+$', // JavaScript's . leaves out U+2028
      '^[[:alpha:]]+$', // a POSIX class for RE2, a nested class for the v flag
      '^(?i)abc$', // RE2 flags
      '^\\pL+$', // RE2's one-letter class
      '^[a-z--_]+$', // a set difference for the v flag
      '^(?P<x>a)$', // no JavaScript
      '^a{,2}$', // a literal brace for RE2, an error for the v flag
      '^[^/]*$', // the v flag, the browser's, wants / escaped in a class
    ];
    expect(otherwise.map((p) => [p, htmlPattern(p)])).to.deep.equal(otherwise.map((p) => [p, undefined]));
  });
});
