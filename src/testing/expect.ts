/**
 * A case's expectations against what its run did. Each failed expectation is one line, `file:line: what was
 * expected, what happened`, at the line of the expectation in the test file.
 */
import type { DeviceCounts, RunSummary } from '../store/store.js';
import type { Seg } from './load.js';
import { compareText } from '../util/text-order.js';

type Json = Record<string, unknown>;

/** What a case's run did, read from the run summary, the store, the emulator and the webhook receivers. */
export interface Observation {
  /** Why no run started (the event is refused, or not selected; the inputs are wrong). */
  refused?: string;
  summary?: RunSummary;
  /** Requests the emulator received, by action. */
  calls(): Promise<Record<string, number>>;
  /** Changes the emulator applied to a device (any identifier), by action. */
  deviceCalls(id: string): Promise<Record<string, number>>;
  /** A device's state in the emulator now; undefined for an unknown device. */
  deviceState(id: string): Promise<string | undefined>;
  /** A step's device outcomes, by device id. */
  outcomes(step: string): Promise<Map<string, string>>;
  /** A step's items, as `steps.<id>.items` gives them (items.ts). */
  items(step: string): Promise<Json[]>;
  /**
   * What a step gave (its output, as a later step reads it), or why it gave nothing; a step inside a forEach,
   * the outputs of the iterations it succeeded in, in the order of the items (`iterations`).
   */
  output(step: string): Promise<{ value: unknown; iterations: boolean } | string>;
  /** The rows a report.write step wrote (by column), or why there are none. */
  report(step: string): Promise<{ header: string[]; rows: Json[] } | string>;
  /** The JSON bodies a webhook receiver got. */
  webhook(name: string): unknown[];
}

/** Every failed expectation of `expect` (at `at` in the file), as `file:line: message`. */
export async function compare(
  expect: Json,
  o: Observation,
  where: (path: Seg[]) => string,
  at: Seg[],
): Promise<string[]> {
  const failures: { at: string; message: string }[] = [];
  const fail = (path: Seg[], message: string) => failures.push({ at: where([...at, ...path]), message });
  const status = o.refused !== undefined ? 'not-started' : o.summary?.status;
  if (expect.status !== undefined && expect.status !== status)
    fail(['status'], `expected status ${String(expect.status)}, got ${describeStatus(o)}`);
  else if (expect.status === undefined && o.refused !== undefined)
    fail([], `the run did not start: ${o.refused}`);
  const error = o.refused ?? o.summary?.error;
  if (typeof expect.error === 'string' && !includes(expect.error, error ?? ''))
    fail(['error'], `expected an error matching ${expect.error}, got ${error ?? 'none'}`);
  const summary = o.summary;
  if (!summary) return inOrder(failures);
  if (expect.devices) countsFailures(expect.devices as Json, summary.devices, ['devices'], fail, 'the run');
  for (const [id, e] of Object.entries((expect.steps as Record<string, Json> | undefined) ?? {}))
    await stepFailures(id, e, o, summary, (path, m) => fail(['steps', id, ...path], m));
  if (expect.calls) {
    const calls = await o.calls();
    for (const [action, n] of Object.entries(expect.calls as Json))
      if ((calls[action] ?? 0) !== n)
        fail(
          ['calls', action],
          `expected ${String(n)} ${action} request(s), the emulator got ${calls[action] ?? 0}`,
        );
  }
  for (const [device, byAction] of Object.entries((expect.deviceCalls as Record<string, Json>) ?? {})) {
    const calls = await o.deviceCalls(device);
    for (const [action, n] of Object.entries(byAction))
      if ((calls[action] ?? 0) !== n)
        fail(
          ['deviceCalls', device, action],
          `expected ${String(n)} ${action} change(s) of device ${device}, the emulator made ${calls[action] ?? 0}`,
        );
  }
  for (const [device, state] of Object.entries((expect.deviceStates as Json) ?? {})) {
    const actual = await o.deviceState(device);
    if (actual !== state)
      fail(
        ['deviceStates', device],
        `expected device ${device} ${String(state)}, it is ${actual ?? 'unknown'}`,
      );
  }
  for (const [name, e] of Object.entries((expect.webhooks as Record<string, Json>) ?? {})) {
    const got = o.webhook(name);
    if (e.requests !== undefined && got.length !== e.requests)
      fail(
        ['webhooks', name, 'requests'],
        `expected ${String(e.requests)} request(s) to ${name}, it got ${got.length}`,
      );
    if (e.body !== undefined && !got.some((b) => matches(e.body, b)))
      fail(
        ['webhooks', name, 'body'],
        `no request to ${name} has a body matching ${JSON.stringify(e.body)}: ${got.length ? bodiesDiffer(e.body, got) : 'it got none'}`,
      );
  }
  return inOrder(failures);
}

/** How many requests' bodies a failed `body` says where they differ: a receiver may get hundreds. */
const BODIES_TOLD = 3;

/** Where each body a receiver got (the first few) differs from the one expected. */
function bodiesDiffer(expected: unknown, got: unknown[]): string {
  const told = got.slice(0, BODIES_TOLD).map((b, i) => {
    const d = differs(mismatch(expected, b));
    return i === 0 ? `request 1 of ${got.length} ${d}` : `request ${i + 1} ${d.replace(/^differs /, '')}`;
  });
  const more = got.length - told.length;
  return `${told.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

/** Where a value differs (mismatch), as `differs at a.b: why`. */
const differs = (m: Mismatch | undefined): string =>
  m ? `differs${m.at ? ` at ${m.at}` : ''}: ${m.why}` : 'matches';

/** The failures in the order of their lines in the file. */
function inOrder(failures: { at: string; message: string }[]): string[] {
  const line = (at: string) => Number(at.slice(at.lastIndexOf(':') + 1));
  return failures.sort((a, b) => line(a.at) - line(b.at)).map((f) => `${f.at}: ${f.message}`);
}

function describeStatus(o: Observation): string {
  if (o.refused !== undefined) return `no run: ${o.refused}`;
  const s = o.summary;
  return `${s?.status}${s?.error ? ` (${s.error})` : ''}`;
}

async function stepFailures(
  id: string,
  e: Json,
  o: Observation,
  summary: RunSummary,
  fail: (path: Seg[], message: string) => void,
): Promise<void> {
  // Every step of the playbook is in the summary (those the run never reached `unreached`), and the test file
  // names no other (index.ts unknownSteps).
  const step = summary.steps.find((s) => s.id === id);
  if (!step) {
    fail([], `the playbook has no step ${id} (its steps: ${summary.steps.map((s) => s.id).join(', ')})`);
    return;
  }
  if (e.status !== undefined && e.status !== step.status)
    fail(
      ['status'],
      `expected step ${id} ${String(e.status)}, got ${step.status}${step.error ? ` (${step.error})` : ''}`,
    );
  if (typeof e.error === 'string' && !includes(e.error, step.error ?? ''))
    fail(['error'], `expected step ${id} to fail with ${e.error}, got ${step.error ?? 'no error'}`);
  if (e.calls !== undefined && e.calls !== step.calls)
    fail(['calls'], `expected step ${id} to make ${String(e.calls)} call(s), it made ${step.calls}`);
  if (e.devices) countsFailures(e.devices as Json, step.devices, ['devices'], fail, `step ${id}`);
  if (e.outcomes) {
    const outcomes = await o.outcomes(id);
    for (const [device, outcome] of Object.entries(e.outcomes as Json))
      if (outcomes.get(device) !== outcome)
        fail(
          ['outcomes', device],
          `expected device ${device} ${String(outcome)} in step ${id}, got ${outcomes.get(device) ?? 'no outcome'}`,
        );
  }
  if (e.items !== undefined) await itemFailures(id, e.items, await o.items(id), fail);
  if (e.output !== undefined) {
    const got = await o.output(id);
    const m = typeof got === 'string' ? undefined : mismatch(e.output, got.value);
    if (typeof got === 'string') fail(['output'], got);
    else if (m) {
      const what = got.iterations
        ? `the output of step ${id} (one for each iteration it succeeded in, in the order of the items)`
        : `the output of step ${id}`;
      fail(['output'], `${what} does not match${m.at ? ` at ${m.at}` : ''}: ${m.why}`);
    }
  }
  if (e.rows === undefined && e.columns === undefined && e.contains === undefined) return;
  const report = await o.report(id);
  if (typeof report === 'string') return fail([], report);
  if (e.rows !== undefined && e.rows !== report.rows.length)
    fail(['rows'], `expected ${String(e.rows)} row(s) in the report of ${id}, it has ${report.rows.length}`);
  if (e.columns !== undefined && JSON.stringify(e.columns) !== JSON.stringify(report.header))
    fail(
      ['columns'],
      `expected the columns ${JSON.stringify(e.columns)}, the report has ${JSON.stringify(report.header)}`,
    );
  ((e.contains as Json[] | undefined) ?? []).forEach((row, i) => {
    if (!report.rows.some((r) => matches(row, r)))
      fail(
        ['contains', i],
        `no row of the report of ${id} matches ${JSON.stringify(row)} (${report.rows.length ? `${report.rows.length} rows; the first ${differs(mismatch(row, report.rows[0]))}` : 'it has no row'})`,
      );
  });
}

/**
 * What of `expected` (the whole list of a step's items, or some devices' items by id) `items` does not match: the
 * list at `items`, a device at its own line.
 */
function itemFailures(
  id: string,
  expected: unknown,
  items: Json[],
  fail: (path: Seg[], message: string) => void,
): void {
  if (Array.isArray(expected)) {
    const m = mismatch(expected, items);
    if (m)
      fail(
        ['items'],
        `the items of step ${id} (each device's latest result, in the order of their ids) do not match${m.at ? ` at ${m.at}` : ''}: ${m.why}`,
      );
    return;
  }
  const byId = new Map(items.map((i) => [String(i.id), i]));
  for (const [device, e] of Object.entries(expected as Json)) {
    const got = byId.get(device);
    if (!got) {
      const ids = [...byId.keys()];
      fail(
        ['items', device],
        `step ${id} has no item of device ${device}: ${ids.length ? `its items are those of ${cut(ids.join(', '))}` : 'it has none'}`,
      );
      continue;
    }
    const m = mismatch(e, got, device);
    if (m) fail(['items', device], `the items of step ${id} do not match at ${m.at}: ${m.why}`);
  }
}

function countsFailures(
  e: Json,
  actual: DeviceCounts,
  at: Seg[],
  fail: (path: Seg[], message: string) => void,
  what: string,
): void {
  for (const [k, n] of Object.entries(e)) {
    if (k === 'byError') {
      if (JSON.stringify(sorted(n as Json)) !== JSON.stringify(sorted(actual.byError)))
        fail(
          [...at, k],
          `expected ${what}'s devices by error ${JSON.stringify(n)}, got ${JSON.stringify(actual.byError)}`,
        );
    } else if (actual[k as keyof DeviceCounts] !== n)
      fail(
        [...at, k],
        `expected ${String(n)} device(s) ${k} in ${what}, got ${String(actual[k as keyof DeviceCounts])}`,
      );
  }
}

/** The non-zero counts, sorted by name: `{ X: 0 }` says no device failed with X. */
const sorted = (o: Json): Json =>
  Object.fromEntries(
    Object.entries(o)
      .filter(([, n]) => n !== 0)
      .sort(([a], [b]) => compareText(a, b)),
  );

/** Whether `text` contains `expected`, or matches it when it is written `/…/`. */
function includes(expected: string, text: string): boolean {
  return isPattern(expected) ? matches(expected, text) : text.includes(expected);
}

const isPattern = (s: string) => s.length > 1 && s.startsWith('/') && s.endsWith('/');

/**
 * Whether `actual` matches `expected`: an object has at least its members, each matching; a list matches
 * item by item; a string `/…/` is a regular expression; anything else is equal (a number matches its text,
 * as a CSV cell holds it).
 */
export function matches(expected: unknown, actual: unknown): boolean {
  return mismatch(expected, actual) === undefined;
}

/** Where a value does not match (matches): the path to the first member that does not (`a.b[2]`), and why. */
export interface Mismatch {
  at: string;
  why: string;
}

/** The first place where `actual` does not match `expected` (matches), or undefined when it matches. */
export function mismatch(expected: unknown, actual: unknown, at = ''): Mismatch | undefined {
  const differs = (why: string): Mismatch => ({ at, why });
  // Shown only when it differs: a report's rows are each matched against every expected row.
  const got = () => `got ${show(actual)}`;
  if (typeof expected === 'string' && isPattern(expected))
    return new RegExp(expected.slice(1, -1)).test(
      typeof actual === 'string' ? actual : JSON.stringify(actual),
    )
      ? undefined
      : differs(`expected ${expected}, ${got()}`);
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return differs(`expected a list, ${got()}`);
    if (expected.length !== actual.length)
      return differs(`expected ${expected.length} item(s), got ${actual.length}: ${show(actual)}`);
    for (const [i, x] of expected.entries()) {
      const m = mismatch(x, actual[i], `${at}[${i}]`);
      if (m) return m;
    }
    return undefined;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return differs(`expected an object, ${got()}`);
    for (const [k, v] of Object.entries(expected)) {
      const place = at ? `${at}.${k}` : k;
      if (!Object.hasOwn(actual, k)) {
        const has = Object.keys(actual);
        return {
          at: place,
          why: `expected ${show(v)}, it has no ${k} (${has.length ? `it has ${cut(has.join(', '))}` : 'it has no member'})`,
        };
      }
      const m = mismatch(v, (actual as Json)[k], place);
      if (m) return m;
    }
    return undefined;
  }
  if (typeof actual === 'string' && typeof expected !== 'string')
    return String(expected) === actual ? undefined : differs(`expected ${show(expected)}, ${got()}`);
  if (typeof expected === 'string')
    return expected === actual || (typeof actual !== 'object' && expected === String(actual))
      ? undefined
      : differs(`expected ${show(expected)}, ${got()}`);
  return expected === actual ? undefined : differs(`expected ${show(expected)}, ${got()}`);
}

/** How long a value shown in a failure may be: a listing's output is thousands of devices. */
const SHOWN = 120;

/** A value as JSON, a pattern as written, cut short when it is long. */
function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  return typeof value === 'string' && isPattern(value) ? value : cut(JSON.stringify(value));
}

const cut = (text: string) => (text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text);
