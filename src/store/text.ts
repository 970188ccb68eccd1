/**
 * Text as both stores keep it. PostgreSQL's text cannot hold a NUL (U+0000) nor a lone surrogate (half of a
 * UTF-16 pair, "\ud800"), and SQLite kept both, a lone surrogate as bytes that are not UTF-8 (read back as three
 * U+FFFD) in a column of its own and as itself in JSON: the same answer of a service read back differently from
 * each store. Each becomes one U+FFFD, on both, where the ledger's entries and the inbox's messages are written
 * and where they are looked up by such a text. The runner refuses a NUL where an answer comes in (MalformedAnswer),
 * naming it; this is what keeps the stores alike whatever reaches them.
 */

/** What neither store keeps as it is: a lone surrogate, a NUL. */
const UNFIT = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|\0/g;

const HAS_UNFIT = new RegExp(UNFIT.source);

/** A string as the stores keep it: each NUL or lone surrogate as U+FFFD. */
export function storedText<T extends string | null>(s: T): T {
  return (s === null ? s : s.replace(UNFIT, '\ufffd')) as T;
}

/** Strings as storedText makes each: `list` itself when none needs it (a batch's ids, thousands, seldom do). */
export function storedTexts(list: readonly string[]): string[] {
  return list.some((s) => HAS_UNFIT.test(s)) ? list.map((s) => storedText(s)) : (list as string[]);
}

/** In JSON.stringify's text: an escaped NUL or lone surrogate (it escapes nothing else of UNFIT), after `\\`s. */
const UNFIT_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/g;

/**
 * JSON.stringify's text of values as the stores keep their strings (storedText), for those, deep in a value (a
 * location's data as the service gave it) or many (a batch's device ids), that are not made so one by one:
 * each escaped NUL or lone surrogate as U+FFFD, the character, as JSON.stringify writes it (a device's id is
 * looked for in the JSON of an entry's ids by that text). Read whole, natively, only when one may be there: the
 * text itself when none is.
 */
export function storedJson(json: string): string {
  return json.includes('\\u0000') || json.includes('\\ud') ? json.replace(UNFIT_ESCAPE, '$1\ufffd') : json;
}
