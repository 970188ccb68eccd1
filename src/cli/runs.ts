/**
 * `fleetbook runs`: the run history and per-device outcomes, read from the store. It loads neither the runner,
 * the client nor any schema, so that it answers at once.
 */
import { once } from 'node:events';
import { isEngineAction } from '../actions/engine.js';
import { cancelTaker, cancelTakerText, liveOwners } from '../store/lease.js';
import { ledgerCsv } from '../actions/report-table.js';
import { parseDuration } from '../playbook/duration.js';
import { deviceFilterProblem, filteredResults } from '../store/device-filter.js';
import { isoMs } from '../util/query.js';
import {
  DEVICE_OUTCOMES,
  emptyCounts,
  ENDED,
  RUN_STATUSES,
  RUN_TRIGGERS,
  type DeviceOutcome,
  type EntryFilter,
  type RunListQuery,
  type RunRecord,
  type Owner,
  type RunStatus,
  type RunSummary,
  type StepSummary,
  type Store,
} from '../store/store.js';
import { runListEntry, shownRun, triggerText } from '../store/run-views.js';
import { aligned, limitOf, returned, withStore } from './store-access.js';
import { EXIT_USAGE } from './exit-codes.js';

/** Something to write text to; a promise means "wait for it before writing more". */
type Write = (s: string) => Promise<void> | undefined;

/**
 * Writes to stdout in chunks of about 64 KB, not a write per line, and waits for stdout to drain when it is
 * full: without that, a slow reader (a pipe, a terminal) would leave the whole output queued in memory.
 */
function bufferedStdout(): { write: Write; flush: () => Promise<void> | undefined } {
  let chunk = '';
  const flush = () => {
    const full = chunk !== '' && !process.stdout.write(chunk);
    chunk = '';
    return full ? once(process.stdout, 'drain').then(() => undefined) : undefined;
  };
  return {
    write: (s) => {
      chunk += s;
      return chunk.length >= 65_536 ? flush() : undefined;
    },
    flush,
  };
}

/**
 * `{ ...head, [key]: rows }` exactly as `JSON.stringify(value, null, 2)` writes it, written as the rows come,
 * so that a run of millions of devices never becomes one string.
 */
export async function writeJsonWithRows(
  write: Write,
  head: object,
  key: string,
  pages: AsyncIterable<readonly unknown[]>,
): Promise<void> {
  const members = JSON.stringify(head, null, 2);
  // `{}`, or `{\n  ...\n}` whose closing line gives way to the array.
  await write(members === '{}' ? '{' : `${members.slice(0, -2)},`);
  await write(`\n  ${JSON.stringify(key)}: [`);
  let first = true;
  for await (const page of pages)
    for (const row of page) {
      await write(`${first ? '' : ','}\n    ${JSON.stringify(row, null, 2).replaceAll('\n', '\n    ')}`);
      first = false;
    }
  await write(first ? ']\n}\n' : '\n  ]\n}\n');
}

/** How deep each step is nested (StepSummary.within): 0 for a step of `steps` or `finally`. */
function depths(steps: readonly StepSummary[]): Map<string, number> {
  const within = new Map(steps.map((st) => [st.id, st.within]));
  const depth = new Map<string, number>();
  const of = (id: string, seen: number): number => {
    const parent = within.get(id);
    return parent === undefined || seen > steps.length ? 0 : 1 + of(parent, seen + 1);
  };
  for (const st of steps) depth.set(st.id, of(st.id, 0));
  return depth;
}

/**
 * How long a step took, as the console's run page says it (console/format.js formatDuration): `850ms`, `42s`,
 * `1m 05s`, `2h 03m 05s`, `3d 04h 12m`.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const t = Math.floor(ms / 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  const [d, h, m, sec] = [
    Math.floor(t / 86_400),
    Math.floor((t % 86_400) / 3600),
    Math.floor((t % 3600) / 60),
    t % 60,
  ];
  if (d) return `${d}d ${pad(h)}h ${pad(m)}m`;
  if (h) return `${h}h ${pad(m)}m ${pad(sec)}s`;
  if (m) return `${m}m ${pad(sec)}s`;
  return `${sec}s`;
}

/**
 * A step's time on its line: how long it took (from `startedAt` to `endedAt`), so far at `now` for the step in
 * progress, `-` for one without times (to come, skipped, never reached; inside a loop while its run goes on).
 */
function stepTime(st: StepSummary, now: number): string {
  if (!st.startedAt) return '-';
  if (st.endedAt) return formatDuration(Date.parse(st.endedAt) - Date.parse(st.startedAt));
  return st.status === 'running' ? formatDuration(Math.max(0, now - Date.parse(st.startedAt))) : '-';
}

/**
 * A run's summary as `fleetbook run` and `runs show` print it: a line per step with its status, how long it took
 * (stepTime; the step in progress says since when), its calls, devices and words.
 */
export function formatSummary(s: RunSummary, now = Date.now()): string {
  const lines = [`run ${s.runId} of ${s.playbook}: ${s.status}${s.dryRun ? ' (dry run)' : ''}`];
  // The version of the playbook it executed (playbook/version.ts): a resumed run may differ from the file.
  if (s.version) lines.push(`  version: ${s.version}`);
  if (s.error) lines.push(`  error: ${s.error}`);
  const depth = depths(s.steps);
  for (const st of s.steps) {
    const d = st.devices;
    // Accepted and unconfirmed devices are named whenever there are any: they are not final successes.
    const pending = (['accepted', 'unconfirmed'] as const)
      .filter((o) => (d[o] ?? 0) > 0)
      .map((o) => `, ${d[o]} ${o}`)
      .join('');
    const devices = d.total
      ? ` devices ${d.total}: ${d.succeeded} succeeded, ${d.failed} failed, ${d.skipped} skipped${pending}`
      : '';
    const by = st.confirmation;
    const confirmed = by
      ? ` (confirmed by callback ${by.callback}, request status ${by.requestStatus}, state read ${by.stateRead}${by.afterRun ? `, callback after the step ended ${by.afterRun}` : ''})`
      : '';
    const since = st.status === 'running' && st.startedAt && !st.endedAt ? ` (since ${st.startedAt})` : '';
    lines.push(
      `  ${('  '.repeat(depth.get(st.id) ?? 0) + st.id).padEnd(24)} ${st.status.padEnd(9)} ${stepTime(st, now).padEnd(10)} calls ${st.calls}${devices}${confirmed}${st.error ? ` (${st.error})` : ''}${st.reason ? ` (${st.reason})` : ''}${st.note ? ` (${st.note})` : ''}${since}`,
    );
    for (const [type, n] of Object.entries(d.byError)) lines.push(`  ${''.padEnd(24)}   ${n} × ${type}`);
  }
  // An engine action (a report, a webhook) is run, not called, and names no device.
  for (const p of s.planned ?? [])
    lines.push(
      isEngineAction(p.action)
        ? `  would run ${p.action} ${p.calls} time(s) (step ${p.step})`
        : `  would call ${p.action} ${p.calls} time(s) for ${p.devices} device(s) (step ${p.step})`,
    );
  return `${lines.join('\n')}\n`;
}

/** The flags of `runs list`. */
export interface ListFlags {
  limit?: string;
  playbook?: string;
  status?: string;
  trigger?: string;
  since?: string;
  json?: boolean;
  state?: string;
}

/** The flags of `runs show`. */
export interface ShowFlags {
  devices?: boolean;
  csv?: boolean;
  step?: string;
  outcome?: string;
  errorType?: string;
  device?: string;
  json?: boolean;
  state?: string;
}

/** `fleetbook runs list`: the runs, newest first, as a table or JSON. */
export async function listCommand(flags: ListFlags): Promise<number> {
  const filter = listFilter(flags);
  if (typeof filter === 'string') {
    process.stderr.write(`fleetbook: ${filter}\n`);
    return EXIT_USAGE;
  }
  return withStore(flags, async (store) => {
    const runs = await store.listRuns(filter);
    if (flags.json) process.stdout.write(`${JSON.stringify(runs.map(runListEntry), null, 2)}\n`);
    else
      process.stdout.write(
        runs.length
          ? // Only a run not ended has an owner to name: the processes are read only then.
            runTable(runs, runs.some(unended) ? await liveOwners(store) : [])
          : `${await noRuns(store, filter)}\n`,
      );
    return 0;
  });
}

/** `fleetbook runs show ID`: the run's summary, and with `--devices` every device outcome. */
export async function showCommand(id: string, flags: ShowFlags): Promise<number> {
  const filter = flags.csv && flags.json ? '--csv and --json: give one of them' : showFilter(flags);
  if (typeof filter === 'string') {
    process.stderr.write(`fleetbook: ${filter}\n`);
    return EXIT_USAGE;
  }
  return withStore(flags, async (store) => {
    const run = await findRun(store, id);
    if (typeof run === 'number') return run;
    const wrong = filter && (await deviceFilterProblem(store, run, filter));
    if (wrong) {
      process.stderr.write(
        `fleetbook: --${wrong.member === 'errorType' ? 'error-type' : 'step'}: ${wrong.problem}\n`,
      );
      return EXIT_USAGE;
    }
    // Device results are streamed from the store and written as they come: a run may have millions.
    const out = bufferedStdout();
    if (flags.csv) {
      // Only the devices, as the console's download and report.write write the ledger (ledgerCsv: a first read
      // finds the columns of what the steps returned).
      for await (const chunk of ledgerCsv(() => filteredResults(store, run, filter))) await out.write(chunk);
      await out.flush();
      return 0;
    }
    // A run as printed, as the daemon's `GET /runs/{id}` gives it: one that ended with every step of its
    // playbook version, those it never reached `unreached`; one not ended with its steps so far.
    const head = await shownRun(store, run);
    const devices = flags.devices || filter ? filteredResults(store, run, filter) : undefined;
    if (flags.json) {
      if (devices) await writeJsonWithRows(out.write, head, 'deviceResults', devices);
      else await out.write(`${JSON.stringify(head, null, 2)}\n`);
    } else {
      await out.write(
        'devices' in head
          ? formatSummary(head)
          : head.steps
            ? formatSummary({ ...head, steps: head.steps, devices: emptyCounts() })
            : `run ${run.id}: ${run.status}\n`,
      );
      if (run.cancelRequested) await out.write(await pendingCancel(store, run, run.cancelRequested));
      else if (unended(run)) await out.write(await unheld(store, run));
      if (devices) {
        let shown = 0;
        for await (const page of devices)
          for (const d of page) {
            shown++;
            await out.write(
              `${`  ${d.step.padEnd(16)} ${d.deviceId.padEnd(22)} ${d.outcome.padEnd(OUTCOME_WIDTH)} ${d.errorType ?? returned(d.data)}`.trimEnd()}\n`,
            );
          }
        // Said, so that a filter that keeps nothing is not read as output cut short.
        if (!shown) await out.write(`  no device results${filter ? ` match ${filterText(filter)}` : ''}\n`);
      }
    }
    await out.flush();
    return 0;
  });
}

/** The width of a device line's outcome: `unconfirmed`, the longest, keeps the error types in one column. */
const OUTCOME_WIDTH = 11;

/** What becomes of an unfinished run asked to cancel (cancelTakerText, as the console's run page says it). */
async function pendingCancel(store: Store, run: RunRecord, reason: string): Promise<string> {
  return `cancel requested (${reason}): ${cancelTakerText(await cancelTaker(store, run), run.id)}\n`;
}

/**
 * What is said of an unfinished run that no live process holds (its `fleetbook run` killed, its daemon gone): who
 * goes on with it, and how to end it. Nothing for a run a live process holds.
 */
async function unheld(store: Store, run: RunRecord): Promise<string> {
  // Who would take it up, as for a cancel asked of it: its live holder, else a live serve or the next to start.
  const taker = await cancelTaker(store, run);
  if ('holder' in taker) return '';
  const stopped = run.status === 'running' ? ' (the process that ran it stopped)' : '';
  const cancel = `\`fleetbook runs cancel ${run.id}\` ends it`;
  // `runs resume` goes on with the version of its playbook the run was created with, which the store keeps.
  if (run.version === undefined || (await store.playbookVersion(run.version)) === undefined)
    return `no process holds this run${stopped}: a \`fleetbook serve\` that loads playbook ${run.playbook} takes it up; ${cancel}\n`;
  const serve =
    taker.serve === 'live'
      ? 'the `fleetbook serve` on this state file takes it up at its next lease renewal, or '
      : '';
  return `no process holds this run${stopped}: ${serve}\`fleetbook runs resume ${run.id}\` goes on with it here, from its checkpoints; ${cancel}\n`;
}

/** `fleetbook runs cancel ID` (runs-cancel.ts). */
export async function cancelCommand(id: string, flags: { state?: string }): Promise<number> {
  return withStore(flags, async (store, config) => {
    const run = await findRun(store, id);
    if (typeof run === 'number') return run;
    return (await import('./runs-cancel.js')).cancelRun(store, run, config);
  });
}

/**
 * The filter of `runs show`'s devices (`--step`, `--outcome`, `--error-type`, `--device`: the console's table's),
 * undefined for none, or what is wrong with its flags. An empty one (an unset shell variable) is refused: read as
 * no filter, it would print every device where some were asked for.
 */
function showFilter(flags: ShowFlags): EntryFilter | undefined | string {
  const given = {
    step: flags.step,
    outcome: flags.outcome,
    'error-type': flags.errorType,
    device: flags.device,
  };
  for (const [name, v] of Object.entries(given))
    if (v?.trim() === '')
      return `--${name} is empty (got ${JSON.stringify(v)}): give a value, or leave it out`;
  const outcome = flags.outcome;
  if (outcome !== undefined && !(DEVICE_OUTCOMES as readonly string[]).includes(outcome))
    return `--outcome must be one of ${DEVICE_OUTCOMES.join(', ')} (got ${JSON.stringify(outcome)})`;
  const filter: EntryFilter = {
    ...(flags.step !== undefined ? { step: flags.step } : {}),
    ...(outcome !== undefined ? { outcome: outcome as DeviceOutcome } : {}),
    ...(flags.errorType !== undefined ? { errorType: flags.errorType } : {}),
    ...(flags.device !== undefined ? { device: flags.device } : {}),
  };
  return Object.keys(filter).length ? filter : undefined;
}

/** A filter as its flags give it: `--step report --outcome failed`. */
function filterText(filter: EntryFilter): string {
  const flags: [string, string | undefined][] = [
    ['--step', filter.step],
    ['--outcome', filter.outcome],
    ['--error-type', filter.errorType],
    ['--device', filter.device],
  ];
  return flags
    .filter(([, v]) => v !== undefined)
    .map(([flag, v]) => `${flag} ${JSON.stringify(v)}`)
    .join(' ');
}

/** The filter of `runs list`, or what is wrong with its flags. */
function listFilter(flags: ListFlags): RunListQuery | string {
  const limit = limitOf(flags.limit);
  if (typeof limit === 'string') return limit;
  // Empty (an unset shell variable), it is no filter: "no runs" would answer another question than the one asked.
  if (flags.playbook?.trim() === '')
    return `--playbook is empty (got ${JSON.stringify(flags.playbook)}): give a playbook name, or leave it out`;
  if (flags.since?.trim() === '')
    return `--since is empty (got ${JSON.stringify(flags.since)}): give a duration or a time, or leave it out`;
  const { status, trigger } = flags;
  if (status !== undefined && !(RUN_STATUSES as readonly string[]).includes(status))
    return `--status must be one of ${RUN_STATUSES.join(', ')} (got ${JSON.stringify(status)})`;
  if (trigger !== undefined && !(RUN_TRIGGERS as readonly string[]).includes(trigger))
    return `--trigger must be one of ${RUN_TRIGGERS.join(', ')} (got ${JSON.stringify(trigger)})`;
  const from = flags.since === undefined ? undefined : sinceTime(flags.since);
  if (from === null)
    return `--since must be a duration back from now (30m, 24h, 7d) or a time (ISO 8601: 2026-11-01, or 2026-11-01T08:00:00Z) (got ${JSON.stringify(flags.since)})`;
  return {
    limit,
    ...(flags.playbook !== undefined ? { playbook: flags.playbook } : {}),
    ...(status !== undefined ? { status: status as RunStatus } : {}),
    ...(trigger !== undefined ? { trigger } : {}),
    ...(from !== undefined ? { from } : {}),
  };
}

/** `--since`: a duration back from now (`24h`), or a time; as ISO in UTC, or null when it is neither. */
function sinceTime(text: string): string | null {
  const ms = parseDuration(text);
  const t = ms === undefined ? isoMs(text) : Date.now() - ms;
  return t === undefined ? null : new Date(t).toISOString();
}

/**
 * What `runs list` says when no run matches: which filters, and, for a playbook the store has no run of at all,
 * that the name is a playbook's `name:` (a file name, or a typo, matches nothing).
 */
async function noRuns(store: Store, filter: RunListQuery): Promise<string> {
  const { playbook, status, trigger, from } = filter;
  const which = [status, trigger, 'runs'].filter((w) => w !== undefined).join(' ');
  const since = from === undefined ? '' : ` since ${from}`;
  if (playbook === undefined) return `no ${which}${since}`;
  const narrowed = status !== undefined || trigger !== undefined || from !== undefined;
  if (narrowed && (await store.listRuns({ playbook, limit: 1 })).length > 0)
    return `no ${which} of playbook ${JSON.stringify(playbook)}${since}`;
  return `no runs of playbook ${JSON.stringify(playbook)}: the store has no run of a playbook of that name (the name is the playbook's \`name:\`, not its file's)`;
}

/** The runs as a table under a header, each column as wide as its widest cell; `owners`: the live ones. */
function runTable(runs: RunRecord[], owners: Owner[]): string {
  const byId = new Map(owners.map((o) => [o.id, o]));
  const rows = [
    ['RUN ID', 'STARTED', 'STATUS', 'TRIGGER', 'PLAYBOOK', 'OWNER'],
    ...runs.map((r) => [
      r.id,
      r.startedAt,
      r.cancelRequested ? `${r.status}, cancel requested` : r.status,
      triggerText(r.trigger, r.dryRun),
      r.playbook,
      ownerCell(r, byId),
    ]),
  ];
  return aligned(rows);
}

/** A run still queued or running: one a process holds, or will take up. */
const unended = (r: RunRecord): boolean => !ENDED.has(r.status);

/**
 * Which process holds an unfinished run: `serve pid 4242 on host-a`, `run pid 99 on host-b` (a `fleetbook run`);
 * `none` when no live process does (a `serve` takes it up, or `runs resume`); `-` for a run that ended, which nobody
 * holds.
 */
function ownerCell(r: RunRecord, live: ReadonlyMap<string, Owner>): string {
  if (!unended(r)) return '-';
  const o = r.owner === undefined ? undefined : live.get(r.owner);
  return o ? `${o.role === 'daemon' ? 'serve' : 'run'} pid ${o.pid} on ${o.host}` : 'none';
}

/** The run whose id is `id` or, failing that, the one run whose id starts with it; else an exit code, said why. */
export async function findRun(store: Store, id: string): Promise<RunRecord | number> {
  // Empty, it is the start of every id: the one run of a store would be shown, or cancelled.
  if (id.trim() === '') {
    process.stderr.write(
      `fleetbook: the run id is empty (got ${JSON.stringify(id)}): give a run id, or the start of one\n`,
    );
    return EXIT_USAGE;
  }
  const exact = await store.getRun(id);
  if (exact) return exact;
  const shown = 10;
  const ids = await store.runIdsStartingWith(id, shown + 1);
  if (ids.length === 1) return (await store.getRun(ids[0] as string)) as RunRecord;
  if (!ids.length) {
    process.stderr.write(`fleetbook: no run ${id}\n`);
    return 1;
  }
  const named = ids.length > shown ? `${ids.slice(0, shown).join(', ')}, ...` : ids.join(', ');
  const count = ids.length > shown ? `more than ${shown}` : String(ids.length);
  process.stderr.write(
    `fleetbook: run id prefix ${id} matches ${count} runs: ${named}; give more of the id\n`,
  );
  return EXIT_USAGE;
}
