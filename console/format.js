/**
 * How the console writes times, durations, ids and what a step returned. Times read in the operator's locale and
 * zone; the UTC ISO the API gave stays one hover away (the `title`), for pasting into a log search.
 */

const clock = { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' };
/** The year only when it is not this one: most of what an operator looks at happened this week. */
const thisYear = new Intl.DateTimeFormat(undefined, /** @type {Intl.DateTimeFormatOptions} */ (clock));
const otherYear = new Intl.DateTimeFormat(
  undefined,
  /** @type {Intl.DateTimeFormatOptions} */ ({ ...clock, year: 'numeric' }),
);

/** @param {string | undefined} iso */
export function formatTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return (d.getFullYear() === new Date().getFullYear() ? thisYear : otherYear).format(d);
}

const hourFormat = new Intl.DateTimeFormat(undefined, {
  weekday: 'short',
  hour: '2-digit',
  minute: '2-digit',
});

/**
 * An hour on a chart axis (`Tue 14:00`): the day is there because the charts span more than one.
 * @param {string} iso
 */
export const formatHour = (iso) => hourFormat.format(new Date(iso));

const pad = (/** @type {number} */ n) => String(n).padStart(2, '0');

/**
 * `850ms`, `42s`, `1m 05s`, `2h 03m 05s`, `3d 04h 12m`: short enough for a table cell, exact to the second
 * where seconds matter; `-` for what is no duration (negative, or not a number), as `fleetbook runs show` writes
 * it (cli/runs.ts formatDuration, held to this one by test/cli/durations-agree.test.ts).
 * @param {number} ms
 */
export function formatDuration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const total = Math.floor(ms / 1000);
  const d = Math.floor(total / 86400);
  const h = Math.floor((total % 86400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (d) return `${d}d ${pad(h)}h ${pad(m)}m`;
  if (h) return `${h}h ${pad(m)}m ${pad(s)}s`;
  if (m) return `${m}m ${pad(s)}s`;
  return `${s}s`;
}

/**
 * The time from `start` to `end`, or to now for what has not ended.
 * @param {string | undefined} start
 * @param {string | undefined} end
 */
export function durationBetween(start, end) {
  if (!start) return '';
  const from = Date.parse(start);
  // Under way, read on a clock behind the server's: none so far, as the CLI says (not `-`).
  const to = end ? Date.parse(end) : Math.max(Date.now(), from);
  return formatDuration(to - from);
}

/**
 * A run id short enough for a table cell: its last 8 characters. A run id is a UUID of version 7, whose first
 * 8 characters are the time, the same for every run of the same minute; its last ones are random.
 * @param {string} id
 */
export const shortId = (id) => String(id).slice(-8);

/**
 * An ISO time as the value of a datetime-local input (local wall time, to the minute).
 * @param {string | undefined} iso
 */
export function toLocalInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
}

/**
 * A datetime-local value (read as local wall time) as UTC ISO, which is what the API bounds take.
 * @param {string} value
 */
export function fromLocalInput(value) {
  if (!value) return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

/** @param {unknown} value */
export const prettyJson = (value) => JSON.stringify(value, null, 2);

/**
 * How deep each step is nested (its `within`, the forEach, parallel or onError step it ran in): 0 at the top.
 * @param {any[]} steps
 */
export function stepDepths(steps) {
  const within = new Map(steps.map((s) => [s.id, s.within]));
  /** @type {(id: string, seen: number) => number} */
  const of = (id, seen) => {
    const parent = within.get(id);
    return parent === undefined || seen > steps.length ? 0 : 1 + of(parent, seen + 1);
  };
  return new Map(steps.map((s) => [s.id, of(s.id, 0)]));
}

/**
 * What a step returned for a device, in a table's cell, as a line and what qualifies it (a line beneath, or
 * none): a location as its latitude and longitude, then its radius and whether it came from the cache; anything
 * else as its JSON, cut short.
 * @param {any} data
 * @returns {[string, string | undefined]}
 */
export function returned(data) {
  if (data && typeof data.latitude === 'number' && typeof data.longitude === 'number') {
    const how = [typeof data.radius === 'number' ? `±${data.radius} m` : '', data.cached ? 'cached' : '']
      .filter(Boolean)
      .join(', ');
    return [`${data.latitude}, ${data.longitude}`, how || undefined];
  }
  const text = JSON.stringify(data);
  return [text.length > 80 ? `${text.slice(0, 79)}…` : text, undefined];
}
