/**
 * fleetbook's cron dialect, and the one engine that says when a schedule fires: `validate`, the daemon's timers
 * and the runs it lists as missed after a restart all ask `CronSchedule.next`, so they cannot disagree.
 *
 * croner computes the occurrences (time zones, L, W, #, nicknames, seconds). This module parses the expression
 * first, so that each mistake gets a message naming its field and value and so that croner only ever sees the
 * dialect docs/playbook.md documents (Schedules); then it drops the occurrences croner gives on the second
 * pass of a wall-clock time that DST repeats (croner fires those for schedules with `*` or a step in their
 * time fields), so that every wall-clock time fires once.
 *
 * The dialect:
 * - 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first; or a nickname (@yearly,
 *   @annually, @monthly, @weekly, @daily, @midnight, @hourly).
 * - Each field: `*`, values, ranges `a-b` (ascending), steps `*\/n` and `a-b/n`, comma lists. Months and weekdays
 *   also by name (JAN, January; MON, Monday), in any case. Sunday is 0 or 7. `?` is `*` in the two day fields.
 * - Day of month: `L` (last day), `LW` (last weekday), `nW` (the weekday nearest the nth, within the month).
 * - Day of week: `5L` (the last Friday of the month), `5#3` (the third Friday), `5#L` (the last Friday).
 * - When both day fields are set, a day must match both (as fleetbook's schedules always fired).
 * - DST: a wall-clock time that occurs twice fires once, at its first occurrence. A time that does not exist
 *   fires at the end of the gap when the schedule names its times (no `*` or step in seconds, minutes, hours:
 *   `30 2 * * *`), and does not fire when the schedule repeats (`*\/15 * * * *`): croner's rule, and Vixie cron's.
 */
import type * as Croner from 'croner';
import { onFirstUse } from '../util/on-first-use.js';

/** croner, loaded by the first schedule to check or to fire: most playbooks have none. */
const croner = onFirstUse<typeof Croner>(import.meta.url, 'croner');

export interface CronSchedule {
  readonly expression: string;
  readonly timezone: string;
  /** The first occurrence strictly after `after` (ms since the epoch), or undefined when there is none. */
  next(after: number): number | undefined;
}

export type Compiled = { ok: true; schedule: CronSchedule } | { ok: false; problem: string };

/**
 * What the check of a cron expression found: its schedule, and whether it fires more than once in some minute;
 * or what is wrong with it (it does not parse, or it never fires).
 */
export type Checked =
  { ok: true; schedule: CronSchedule; frequent: boolean } | { ok: false; problem: string };

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: ReadonlyMap<string, number>;
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

/** Full names and their first three letters. */
function names(list: string[], first: number): ReadonlyMap<string, number> {
  return new Map(list.flatMap((n, i) => [[n, i + first] as const, [n.slice(0, 3), i + first] as const]));
}

const SECOND: FieldSpec = { name: 'second', min: 0, max: 59 };
const MINUTE: FieldSpec = { name: 'minute', min: 0, max: 59 };
const HOUR: FieldSpec = { name: 'hour', min: 0, max: 23 };
const DAY: FieldSpec = { name: 'day of month', min: 1, max: 31 };
const MONTH: FieldSpec = { name: 'month', min: 1, max: 12, names: names(MONTHS, 1) };
const WEEKDAY: FieldSpec = { name: 'day of week', min: 0, max: 7, names: names(WEEKDAYS, 0) };

const NICKNAMES: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** What the parse learnt about the day fields, to say why an expression never fires. */
interface Days {
  /** Day of month restricted (not `*` or `?`), and the days it names (nW counts as n); undefined for L and LW. */
  dayOfMonth?: { text: string; days: Set<number> | undefined };
  months: Set<number>;
  /** Day of week restricted. */
  dayOfWeek?: string;
}

class CronSyntaxError extends Error {}

function fail(message: string): never {
  throw new CronSyntaxError(message);
}

/** Parses a number or (for months and weekdays) a name of `spec`, within its range. */
function value(text: string, spec: FieldSpec): number {
  let n: number | undefined;
  if (/^\d+$/.test(text)) n = Number(text);
  else n = spec.names?.get(text.toLowerCase());
  if (n === undefined) {
    fail(`${spec.name} ${JSON.stringify(text)} is not a number${spec.names ? ' or a name' : ''}`);
  }
  if (n < spec.min || n > spec.max) fail(`${spec.name} ${n} is out of range (${spec.min}-${spec.max})`);
  return n;
}

/** `a` or `a-b` (ascending) of `spec`: its first and last values. */
function range(text: string, spec: FieldSpec): [number, number] {
  const parts = text.split('-');
  if (parts.length > 2 || parts.some((p) => p === ''))
    fail(`${spec.name} ${JSON.stringify(text)} is not a value or a range`);
  const from = value(parts[0] as string, spec);
  let to = parts.length === 2 ? value(parts[1] as string, spec) : from;
  // Sunday ends a week as 7: MON-SUN is 1-7.
  if (spec === WEEKDAY && to === 0 && from > 0) to = 7;
  if (to < from) {
    // What wraps around is the end of the field, then its start: for weekdays, from Sunday, which a range can
    // only start as 0 (as 7 it ends the week), so 7-1 wraps as 0-1.
    const span = (a: number, b: number) => (a === b ? `${a}` : `${a}-${b}`);
    const wrap =
      spec !== WEEKDAY
        ? `${span(from, spec.max)},${span(spec.min, to)}`
        : from === 7
          ? `${span(0, to)} (Sunday is 0 as well as 7)`
          : `${span(from, 6)},${span(0, to)}`;
    fail(`${spec.name} range ${text} runs backwards: write ${wrap} to wrap around, or ${to}-${from}`);
  }
  return [from, to];
}

/**
 * One field: checked item by item, and rewritten for croner with names as numbers and `?` as `*`. `days`, when
 * given, collects the values of plain items (to explain a day of month that never occurs).
 */
function field(text: string, spec: FieldSpec, days?: Set<number>): string {
  const dayField = spec === DAY || spec === WEEKDAY;
  const items = text.split(',');
  if (items.some((i) => i === '')) fail(`${spec.name} ${JSON.stringify(text)} has an empty list item`);
  return items
    .map((raw) => {
      const item = raw.toUpperCase();
      if (item === '?') {
        if (!dayField)
          fail(`? (no specific value) is only for day of month and day of week, not ${spec.name}`);
        if (items.length > 1) fail(`? stands alone in ${spec.name}, not in a list (${JSON.stringify(text)})`);
        return '*';
      }
      if (spec === DAY && item === 'LW' && items.length > 1)
        fail(`LW stands alone in day of month, not in a list (${JSON.stringify(text)})`);
      if (spec === DAY && (item === 'L' || item === 'LW')) return item;
      if (spec === DAY && /^\d+W$/.test(item)) {
        const n = value(raw.slice(0, -1), spec);
        days?.add(n);
        return `${n}W`;
      }
      if (spec === DAY && /^L-/.test(item))
        fail(`day of month ${raw}: L-n (n days before the last) is not supported`);
      if (spec === WEEKDAY) {
        // Matched on the upper-cased item, read from the raw one (same positions), for messages in its own words.
        const special = /^([A-Z0-9]+(?:-[A-Z0-9]+)?)(L|#(\d+|L))$/.exec(item);
        if (special) {
          const [from, to] = range(raw.slice(0, (special[1] as string).length), spec);
          const nth = special[3];
          if (nth !== undefined && nth !== 'L' && (Number(nth) < 1 || Number(nth) > 5)) {
            fail(
              `day of week ${raw}: #${nth} is not an occurrence of a weekday in a month (1-5, or L for the last)`,
            );
          }
          return `${from === to ? from : `${from}-${to}`}${special[2] === 'L' ? 'L' : `#${nth}`}`;
        }
      }
      const parts = raw.split('/');
      if (parts.length > 2) fail(`${spec.name} ${JSON.stringify(raw)} has more than one step`);
      const [base, stepText] = parts as [string, string | undefined];
      let step = 1;
      if (stepText !== undefined) {
        if (!/^\d+$/.test(stepText) || Number(stepText) < 1) {
          fail(`${spec.name} ${JSON.stringify(raw)}: the step must be a whole number from 1`);
        }
        step = Number(stepText);
        if (step > spec.max - spec.min + 1) {
          fail(
            `${spec.name} ${JSON.stringify(raw)}: a step of ${step} is more than the field's ${spec.max - spec.min + 1} values`,
          );
        }
      }
      if (base === '*') {
        if (stepText === undefined) return '*';
        for (let n = spec.min; n <= spec.max; n += step) days?.add(n);
        return `*/${step}`;
      }
      if (stepText !== undefined && !base.includes('-')) {
        const example = /^\d+$/.test(base) ? ` or ${base}-${spec.max}/${step}` : '';
        fail(
          `${spec.name} ${JSON.stringify(raw)}: a step applies to * or a range, as in */${step}${example}`,
        );
      }
      const [from, to] = range(base, spec);
      for (let n = from; n <= to; n += step) days?.add(n);
      const r = from === to ? `${from}` : `${from}-${to}`;
      return stepText === undefined ? r : `${r}/${step}`;
    })
    .join(',');
}

interface Parsed {
  /** The expression for croner: numbers only, `*` for `?`. */
  pattern: string;
  seconds: boolean;
  days: Days;
}

/** Checks an expression against the dialect and rewrites it for croner; throws CronSyntaxError. */
function parse(expression: string): Parsed {
  const trimmed = expression.trim();
  let text = trimmed;
  if (trimmed.startsWith('@')) {
    const nickname = trimmed.toLowerCase();
    if (nickname === '@reboot') {
      fail('@reboot is not supported: a schedule fires at times of day, not when the daemon starts');
    }
    const known = NICKNAMES[nickname];
    if (!known) {
      fail(
        `unknown nickname ${trimmed} (use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)`,
      );
    }
    text = known;
  }
  const fields = text === '' ? [] : text.split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    fail(`it has ${fields.length} fields; it needs 5 (minute hour day month weekday) or 6 (seconds first)`);
  }
  const seconds = fields.length === 6;
  const [s, m, h, dom, mon, dow] = seconds ? fields : ['0', ...fields];
  const months = new Set<number>();
  const days = new Set<number>();
  const domOut = field(dom as string, DAY, days);
  const monOut = field(mon as string, MONTH, months);
  const dowOut = field(dow as string, WEEKDAY);
  const pattern = [
    ...(seconds ? [field(s as string, SECOND)] : []),
    field(m as string, MINUTE),
    field(h as string, HOUR),
    domOut,
    monOut,
    dowOut,
  ].join(' ');
  const domText = dom as string;
  return {
    pattern,
    seconds,
    days: {
      months: monOut === '*' ? new Set(MONTHS.map((_, i) => i + 1)) : months,
      ...(domOut === '*'
        ? {}
        : { dayOfMonth: { text: domText, days: /L/i.test(domText) ? undefined : days } }),
      ...(dowOut === '*' ? {} : { dayOfWeek: dow as string }),
    },
  };
}

const DAYS_IN_MONTH = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function orList(items: string[], word: string): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} ${word} ${items.at(-1)}`;
}

/** Why an expression that parses has no occurrence. */
function neverReason(days: Days): string {
  const dom = days.dayOfMonth;
  if (dom?.days) {
    const listed = [...dom.days].sort((a, b) => a - b);
    const months = [...days.months].sort((a, b) => a - b);
    if (!listed.some((d) => months.some((m) => d <= (DAYS_IN_MONTH[m] as number)))) {
      const monthNames = months.map((m) => (MONTHS[m - 1] as string).replace(/^./, (c) => c.toUpperCase()));
      return `${orList(monthNames, 'and')} ${months.length === 1 ? 'has' : 'have'} no day ${orList(listed.map(String), 'or')}`;
    }
  }
  if (dom && days.dayOfWeek !== undefined) {
    return `no day is both day of month ${dom.text} and day of week ${days.dayOfWeek} (when both are set, a day must match both)`;
  }
  return 'no date matches it';
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** The UTC offset of `zone` at `at`, in ms. */
function offsetAt(zone: string, at: number): number {
  let format = offsetFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    offsetFormats.set(zone, format);
  }
  const p: Record<string, number> = {};
  for (const { type, value: v } of format.formatToParts(at)) if (type !== 'literal') p[type] = Number(v);
  const wall = Date.UTC(p.year as number, (p.month as number) - 1, p.day, p.hour, p.minute, p.second);
  return wall - Math.floor(at / 1000) * 1000;
}

const UTC_ZONES = new Set(['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT']);

class Schedule implements CronSchedule {
  constructor(
    readonly expression: string,
    readonly timezone: string,
    private readonly cron: Croner.Cron,
  ) {}

  next(after: number): number | undefined {
    let from = after;
    for (;;) {
      const at = this.cron.nextRun(new Date(from))?.getTime();
      if (at === undefined) return undefined;
      const repeatedUntil = this.secondPassEnd(at);
      if (repeatedUntil === undefined) return at;
      // Every time up to the end of the repeated span is a second pass: skip them all at once.
      from = repeatedUntil - 1;
    }
  }

  /**
   * When the wall-clock time of `at` already occurred before the clocks went back (`at` is its second pass),
   * the end of the repeated span: the first instant whose wall-clock time is new. A fall-back in the 24 h
   * before `at` shows as a larger offset a day earlier.
   */
  private secondPassEnd(at: number): number | undefined {
    if (UTC_ZONES.has(this.timezone)) return undefined;
    const offset = offsetAt(this.timezone, at);
    const before = offsetAt(this.timezone, at - DAY_MS);
    if (before <= offset || offsetAt(this.timezone, at - (before - offset)) !== before) return undefined;
    // The transition: the first instant with the later offset, found to the second.
    let lo = at - DAY_MS; // the earlier offset
    let hi = at; // the later one
    while (hi - lo > 1000) {
      const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
      if (offsetAt(this.timezone, mid) === before) lo = mid;
      else hi = mid;
    }
    return hi + (before - offset);
  }
}

function build(expression: string, timezone: string): { parsed: Parsed; schedule: CronSchedule } | string {
  let parsed: Parsed;
  let cron: Croner.Cron;
  try {
    parsed = parse(expression);
    try {
      cron = new (croner().Cron)(parsed.pattern, {
        timezone,
        paused: true,
        domAndDow: true,
        mode: parsed.seconds ? '6-part' : '5-part',
        // A time named in the seconds, minutes and hours (no * or step) fires once at the end of a DST gap.
        fixedTimeRule: 'no-wildcard',
      });
    } catch (e) {
      // What the parse lets through and croner refuses (LW in a list, for one), in croner's words.
      fail((e as Error).message.replace(/^CronPattern: (Syntax error, )?/, ''));
    }
  } catch (e) {
    if (e instanceof CronSyntaxError)
      return `invalid cron expression ${JSON.stringify(expression)}: ${e.message}`;
    throw e;
  }
  return { parsed, schedule: new Schedule(expression, timezone, cron) };
}

/**
 * A compiled expression, what it parsed to (undefined when it does not compile), and its check once made: an
 * expression that never fires takes croner up to ~0.3 s to rule out.
 */
interface Built {
  compiled: Compiled;
  parsed?: Parsed;
  checked?: Checked;
}

/**
 * The expressions compiled, by time zone and expression, with their checks: the only cache of them. The
 * playbook check (validate, the daemon's load of its playbooks) and the daemon's scheduler each compile a
 * schedule, and get the same one, compiled once in the process. Emptied when it grows past a bound
 * (expressions a long-lived daemon saw edited many times).
 */
const compiledCrons = new Map<string, Built>();
const MAX_COMPILED = 10_000;

function compiled(expression: string, timezone: string): Built {
  const key = `${timezone}\n${expression}`;
  let b = compiledCrons.get(key);
  if (b) return b;
  const built = build(expression, timezone);
  b =
    typeof built === 'string'
      ? { compiled: Object.freeze({ ok: false, problem: built }) }
      : { compiled: Object.freeze({ ok: true, schedule: built.schedule }), parsed: built.parsed };
  if (compiledCrons.size >= MAX_COMPILED) compiledCrons.clear();
  compiledCrons.set(key, b);
  return b;
}

/**
 * Compiles a cron expression of the dialect above, in an IANA time zone (default UTC): once in the process for
 * each expression and zone (the same answer each time after).
 */
export function compileCron(expression: string, timezone = 'UTC'): Compiled {
  return compiled(expression, timezone).compiled;
}

/**
 * The check of a cron expression, as `validate` and the daemon's load of its playbooks make it (schedule.ts
 * scheduleProblems): its schedule when it is valid (it parses, and it fires at least once), with whether it
 * fires more than once in some minute; else what is wrong with it. Made once in the process for each
 * expression and zone. croner searches up to the year 3000; a calendar repeats every 400 years, so an
 * expression that does not fire by then never does, from whichever day it is asked.
 */
export function checkCron(expression: string, timezone = 'UTC'): Checked {
  const built = compiled(expression, timezone);
  return (built.checked ??= check(built, expression));
}

function check({ compiled: c, parsed }: Built, expression: string): Checked {
  if (!c.ok) return c;
  if (c.schedule.next(Date.now()) === undefined)
    return Object.freeze({
      ok: false,
      problem: `cron expression ${JSON.stringify(expression)} never fires: ${neverReason((parsed as Parsed).days)}`,
    });
  return Object.freeze({ ok: true, schedule: c.schedule, frequent: firesMoreThanOncePerMinute(c.schedule) });
}

/**
 * True when a schedule fires more than once in some minute: its expression has a seconds field that gives more
 * than one second (`*\/60` and `0-0` give one). Every second of a minute that matches fires, so the first two
 * occurrences from the start of a minute are in one minute exactly when that is so.
 */
function firesMoreThanOncePerMinute(schedule: CronSchedule): boolean {
  if (schedule.expression.trim().split(/\s+/).length !== 6) return false;
  const first = schedule.next(Date.UTC(2026, 0, 1) - 1);
  const second = first === undefined ? undefined : schedule.next(first);
  return second !== undefined && second - (first as number) < 60_000;
}

/**
 * What a valid expression fires, in `timezone`, as croner reads it: two expressions with the same key fire at the
 * same instants (`@daily` and `0 0 * * *`, `* * * * 7` and `* * * * 0`, names and numbers, `*` and the field's
 * whole range); undefined for one that does not compile. The key is croner's parsed pattern: the seconds,
 * minutes, hours, days of month, months and weekdays it matches (Sunday as 0, never 7), `L`, `LW`, `nW`, and,
 * outside UTC, whether the time is fixed, which decides where a DST gap fires (the module's comment). Days
 * both fields rule out alike (`30 2 * *` against nothing) are not told apart: such keys differ.
 */
export function firesKey(expression: string, timezone = 'UTC'): string | undefined {
  const built = compiled(expression, timezone);
  if (!built.compiled.ok || !built.parsed) return undefined;
  const p = new (croner().CronPattern)(built.parsed.pattern, timezone, {
    mode: built.parsed.seconds ? '6-part' : '5-part',
    fixedTimeRule: 'no-wildcard',
  });
  const zone = new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  return JSON.stringify([
    zone,
    p.second,
    p.minute,
    p.hour,
    p.day,
    p.month,
    p.dayOfWeek.slice(0, 7),
    p.lastDayOfMonth,
    p.lastWeekday,
    p.nearestWeekdays,
    p.useAndLogic,
    UTC_ZONES.has(zone) || p.isFixedTime,
  ]);
}

export interface Occurrences {
  /** Oldest first. */
  times: number[];
  /** There were more than the times listed: these are the most recent. */
  more: boolean;
}

/** The occurrences of `s` in (after, upTo], oldest first, at most `max` of them (the first ones). */
function walk(s: CronSchedule, after: number, upTo: number, max: number): number[] {
  const out: number[] = [];
  for (let t = s.next(after); t !== undefined && t <= upTo && out.length < max; t = s.next(t)) out.push(t);
  return out;
}

/**
 * The occurrences of `s` in (after, upTo], oldest first; when there are more than `limit`, the `limit` most
 * recent. Both the live scheduler (the occurrences since its last tick) and the missed-run policy (those since
 * the last stored fire) use this, and every time it lists comes from `s.next`.
 */
export function occurrences(s: CronSchedule, after: number, upTo: number, limit: number): Occurrences {
  const cap = 4 * limit + 4;
  const head = walk(s, after, upTo, cap + 1);
  if (head.length <= cap) return { times: head.slice(-limit), more: head.length > limit };
  // Many more were missed (a daemon down for long, a schedule every second): walk only from a later start that
  // leaves between `limit` and `cap` of them. Guess it from how dense the first ones were, then bisect: the
  // count only shrinks as the start moves later, by at most one per occurrence.
  let lo = after; // more than cap after it
  let hi = upTo; // fewer than limit after it
  let from = Math.max(after + 1, upTo - Math.ceil((((head.at(-1) as number) - after) * 2 * limit) / cap));
  for (;;) {
    const tail = walk(s, from, upTo, cap + 1);
    if (tail.length > cap) lo = from;
    else if (tail.length < limit) hi = from;
    else return { times: tail.slice(-limit), more: true };
    from = lo + Math.floor((hi - lo) / 2);
  }
}
