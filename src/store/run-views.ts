/**
 * A stored run as it is shown: its summary with every step of its playbook version, and its entry in a list of
 * runs. One place for both, so that `runs show --json` and `GET /runs/{id}` (and the console's run page), and
 * `runs list --json` and `GET /runs`, answer alike; and what started a run, as `runs list` and the console's runs
 * table say it. It loads neither the runner nor any schema.
 */
import type { Playbook } from '../playbook/schema.js';
import { eachStep } from '../playbook/step-tree.js';
import { redactRun } from '../util/secrets.js';
import { checkpointSteps, everyStep, plannedOf, stepsOutsideLoops } from './checkpoint-steps.js';
import { moveSteps } from './late.js';

import { type DeviceCounts, type RunRecord, type RunSummary, type StepSummary, type Store } from './store.js';

export { everyStep };

/**
 * The summary of `run` as shown, with every step of the playbook version it ran (everyStep); undefined while it
 * has not ended. One whose version the store does not keep (a run older than versions) lists the steps it entered.
 * So does a run cancelled with no step listed: one an earlier `fleetbook runs cancel` ended while no process held
 * it, whose summary did not name the steps its dead process ran (stepsOfEnded now does), and which `unreached`
 * would misstate.
 */
export async function shownSummary(store: Store, run: RunRecord): Promise<RunSummary | undefined> {
  const s = run.summary;
  if (!s || (s.status === 'cancelled' && !s.steps.length)) return s;
  // A definition fleetbook did not write: the steps the run entered are still true.
  const pb = await keptVersion(store, run.version ?? s.version);
  return pb ? { ...s, steps: everyStep(s.steps, pb) } : s;
}

/**
 * What a run not ended shows of itself, from its checkpoints: its steps so far (those it ended as they ended, the one it is in `running`,
 * the others `pending`: checkpoint-steps.ts), and, of a dry run,
 * the calls it has planned so far (its summary's `planned` once it ends). Past MARKS_READ checkpoints, only those
 * of the steps outside loops are read: the calls planned inside a loop are listed once the run ends.
 */
export interface LiveView {
  steps?: StepSummary[];
  planned?: NonNullable<RunSummary['planned']>;
}

/** What `run` shows of itself while it has not ended (LiveView); nothing once it has ended. */
export async function liveView(store: Store, run: RunRecord): Promise<LiveView> {
  if (run.status !== 'queued' && run.status !== 'running') return {};
  const pb = await keptVersion(store, run.version);
  if (!pb) return {};
  if (run.status === 'queued')
    return { steps: checkpointSteps(new Map(), pb, 'queued'), ...(run.dryRun ? { planned: [] } : {}) };
  // Bounded: a loop of a million iterations has a million checkpoints, and the console asks every 2 s.
  let marks = await store.stepMarks(run.id, { limit: MARKS_READ + 1 });
  const whole = marks.size <= MARKS_READ;
  if (!whole) marks = await store.stepMarks(run.id, { keys: [...stepsOutsideLoops(pb)] });
  const steps = checkpointSteps(marks, pb, 'running', !whole);
  // Its steps' counts with the results recorded late meanwhile, as its summary will have them: of the steps
  // whose counts were read (all, or those outside loops).
  const counted = whole ? undefined : stepsOutsideLoops(pb);
  const moves = run.lateMoves?.filter((m) => !counted || counted.has(m.step));
  if (moves) moveSteps(steps, moves);
  return { steps, ...(run.dryRun ? { planned: plannedOf(marks, steps) } : {}) };
}

/**
 * A run not ended as it is shown (`GET /runs/{id}`, `runs show`, with or without `--json`): what it is, its steps
 * so far and a dry run's calls planned so far (liveView), without its inputs and event.
 */
export type UnendedRun = Pick<
  RunSummary,
  'runId' | 'playbook' | 'version' | 'status' | 'startedAt' | 'dryRun'
> &
  LiveView & { trigger: unknown; owner?: string };

/** `run` as shown: its summary once it has ended (shownSummary), else what it shows of itself so far (UnendedRun). */
export async function shownRun(store: Store, run: RunRecord): Promise<RunSummary | UnendedRun> {
  const summary = await shownSummary(store, run);
  if (summary) return summary;
  const { steps, planned } = await liveView(store, run);
  return {
    runId: run.id,
    playbook: run.playbook,
    ...(run.version ? { version: run.version } : {}),
    status: run.status,
    startedAt: run.startedAt,
    trigger: run.trigger,
    ...(run.dryRun ? { dryRun: true } : {}),
    ...(run.owner ? { owner: run.owner } : {}),
    ...(steps ? { steps } : {}),
    ...(planned ? { planned } : {}),
  };
}

/**
 * How many checkpoints a run's steps are read from while it runs, at most: more (a loop's iterations), and those
 * of the steps inside loops are not read (checkpoint-steps.ts UNCOUNTED).
 */
export const MARKS_READ = 2_000;

/**
 * The steps of `run`, ended now by `fleetbook runs cancel` while no process held it, from its checkpoints: those
 * its process ended as they ended, the one it was in `cancelled`, the others `unreached`. None when the store does
 * not keep its playbook version.
 */
export async function stepsOfEnded(store: Store, run: RunRecord): Promise<StepSummary[]> {
  const pb = await keptVersion(store, run.version);
  return pb ? checkpointSteps(await store.stepMarks(run.id), pb, 'ended') : [];
}

/** The ids of every step of `run`'s playbook version, nested ones after their parent; none when the store does not keep it. */
export async function stepIdsOf(store: Store, run: RunRecord): Promise<string[] | undefined> {
  const pb = await keptVersion(store, run.version);
  if (!pb) return undefined;
  const ids: string[] = [];
  for (const list of [pb.steps, pb.finally]) eachStep(list, (s) => ids.push(s.id));
  return ids;
}

/** The playbook version the store keeps, read (the definition fleetbook wrote), or undefined. */
async function keptVersion(
  store: Store,
  version: string | undefined,
): Promise<Pick<Playbook, 'steps' | 'finally'> | undefined> {
  const definition = version === undefined ? undefined : await store.playbookVersion(version);
  if (definition === undefined) return undefined;
  try {
    const pb = JSON.parse(definition) as Playbook;
    return Array.isArray(pb.steps) ? pb : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A run in a list of runs (`runs list --json`, `GET /runs`): the run as the store keeps it, its inputs and event
 * masked (redactRun), without its summary but for its device counts, once it has ended, nor the results recorded
 * late while it goes on (its steps count them).
 */
export type RunListEntry = Omit<RunRecord, 'summary' | 'lateMoves'> & { devices?: DeviceCounts };

export function runListEntry({ summary, lateMoves: _moves, ...run }: RunRecord): RunListEntry {
  return { ...redactRun(run), ...(summary ? { devices: summary.devices } : {}) };
}

/**
 * What started a run, in a word or two, as `runs list` (its TRIGGER) and the console's runs table (`triggerText`
 * of a RunRow) say it: `manual`, `schedule`, `callback DeviceUsage`; a run made up at a start, or by `fleetbook
 * run --scheduled-at`, with the fire it was for, which its start does not tell: `schedule, missed for
 * 2026-11-28T07:00:00Z`, `schedule, backfill for ...`; a dry run says so: `manual, dry run`.
 */
export function triggerText(trigger: unknown, dryRun?: boolean): string {
  const text = triggerWords(trigger);
  return dryRun ? `${text}, dry run` : text;
}

function triggerWords(trigger: unknown): string {
  const t = (trigger ?? {}) as { type?: unknown; reason?: unknown; service?: unknown; scheduledAt?: unknown };
  if (typeof t.type !== 'string') return '-';
  if (t.type === 'schedule' && (t.reason === 'missed' || t.reason === 'backfill'))
    return `schedule, ${t.reason}${typeof t.scheduledAt === 'string' ? ` for ${t.scheduledAt.replace(/\.000Z$/, 'Z')}` : ''}`;
  if (t.type === 'callback' && typeof t.service === 'string') return `callback ${t.service}`;
  return t.type;
}
