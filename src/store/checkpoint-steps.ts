/**
 * A run's steps as its checkpoints tell them (`run_steps`, written as the run goes: runner/types.ts Checkpoint),
 * with every step of its playbook version: while it runs (`runs show`, `GET /runs/{id}`, the console's run page),
 * and for the summary of a run `fleetbook runs cancel` ended while no process held it. It reads the checkpoints
 * without their outputs and items (Store.stepMarks), and no device result.
 *
 * A checkpoint is written when a step ends (and, as it goes, by a step that sends, confirms, reports or waits),
 * and a mark as it begins (`running`, with when) and as its `if` skips it (`skipped`, with why): runner/step-marks.ts.
 * Inside a loop only the first start and the first skip of each step are marked, but every start of a loop. So,
 * along a list of steps
 * (`steps`, `finally`, a loop's body, a rescue): a step that has one is as it says (`running` while its status is
 * one of a step under way: `running`, `sending`, `confirming`, `reporting`, `waiting`), with its start while it
 * runs and its times once it ended outside any loop; one without, before a step that has one, was skipped (its `if`
 * was false: a run written before the marks); the one after the last that ended, in a list still under way, is
 * `running` outside any loop (likewise), `pending` inside one (never begun); the rest are `pending`, or `unreached`
 * once the list stopped (a failure nothing handles, a cancel) or the run ended. A loop's iterations have their own
 * checkpoints (`loop[3]/inner`): its inner steps are shown over every iteration, `running` while the loop goes on
 * once one began them (`skipped` while every iteration that reached them skipped them by `if`), as
 * StepSummary.within places them; a loop inside it, whose every start is marked, as its last state: `running`
 * while an iteration is in it, else as its iterations ended it.
 */
import type { Playbook, Step } from '../playbook/schema.js';
import { eachStep, nestedLists } from '../playbook/step-tree.js';
import {
  addCounts,
  emptyCounts,
  type Confirmation,
  type DeviceCounts,
  type RunSummary,
  type StepStatus,
  type StepSummary,
} from './store.js';

/** What a checkpoint says of its step, without its output and items. */
export interface StepMark {
  status?: string;
  devices?: DeviceCounts;
  calls?: number;
  attempts?: number;
  confirmation?: Confirmation;
  error?: string;
  reason?: string;
  note?: string;
  startedAt?: string;
  endedAt?: string;
  /** A dry run's planned step: what it would call (runner/types.ts Checkpoint.planned). */
  planned?: { action: string; calls: number; devices: number };
}

/** The members of a checkpoint a StepMark keeps. */
export const MARKS = [
  'status',
  'devices',
  'calls',
  'attempts',
  'confirmation',
  'error',
  'reason',
  'note',
  'startedAt',
  'endedAt',
  'planned',
] as const;

/** `o` without its members that are null: a checkpoint's marks as SQL gives them, a missing one null. */
export function withoutNulls(o: object): object {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));
}

/** The statuses a step ends with; any other a checkpoint holds is that of a step under way. */
export const ENDED = new Set<string>(['succeeded', 'failed', 'skipped', 'planned', 'cancelled']);
/** Which status a step inside a loop that ended shows, the first any iteration ended it with (after-loop.ts). */
const PRECEDENCE: StepStatus[] = ['failed', 'cancelled', 'succeeded', 'planned', 'skipped'];
/** The reason of a step with no checkpoint before one that has one. */
const IF_FALSE = '`if` was false';

/** What the checkpoints of one step say together: one outside a loop, one per iteration that reached it inside. */
interface Seen {
  by: Map<string, number>;
  devices: DeviceCounts;
  calls: number;
  attempts: number;
  confirmation?: Confirmation;
  error?: string;
  reason?: string;
  note?: string;
  /** The earliest start and the latest end its checkpoints keep. */
  startedAt?: string;
  endedAt?: string;
  /** Whether each of its checkpoints marks a skip by `if` (runner/step-marks.ts). */
  ifFalse: boolean;
}

/**
 * Whether the list of steps is under way (`live`), will not go on (`over`: the run ended, or moved past it), is
 * still to come (`pending`) or will never come (`unreached`).
 */
type Phase = 'live' | 'over' | 'pending' | 'unreached';
/** How a list, or a step, left the steps after it: gone past (`passed`), still in it (`open`), `stopped`. */
type End = 'passed' | 'open' | 'stopped';

/**
 * The steps of `pb`, a run's playbook version, from the run's checkpoints `marks` (by key), in everyStep's order:
 * of a run `queued` (every step `pending`), `running`, or `ended` (no step of it is under way any more: one that
 * was is `cancelled`).
 */
export function checkpointSteps(
  marks: ReadonlyMap<string, unknown>,
  pb: Pick<Playbook, 'steps' | 'finally'>,
  run: 'queued' | 'running' | 'ended',
  outsideLoopsOnly = false,
): StepSummary[] {
  const ended = run === 'ended';
  const outside = stepsOutsideLoops(pb);
  const seen = new Map<string, Seen>();
  for (const [key, value] of marks) {
    const m = (value ?? {}) as StepMark;
    const id = stepOfKey(key);
    let s = seen.get(id);
    if (!s)
      seen.set(id, (s = { by: new Map(), devices: emptyCounts(), calls: 0, attempts: 0, ifFalse: true }));
    const status = typeof m.status === 'string' ? m.status : 'running';
    const as = ENDED.has(status) ? status : 'running';
    s.by.set(as, (s.by.get(as) ?? 0) + 1);
    if (m.devices) addCounts(s.devices, m.devices);
    s.calls += m.calls ?? 0;
    s.attempts += m.attempts ?? 0;
    if (m.confirmation) addConfirmation((s.confirmation ??= { ...NONE_CONFIRMED }), m.confirmation);
    if (as === 'failed' || as === 'cancelled') s.error ??= m.error;
    if (as === 'skipped') s.reason ??= m.reason;
    if (m.note) s.note = m.note;
    if (typeof m.startedAt === 'string' && !(s.startedAt && s.startedAt <= m.startedAt))
      s.startedAt = m.startedAt;
    if (typeof m.endedAt === 'string' && !(s.endedAt && s.endedAt >= m.endedAt)) s.endedAt = m.endedAt;
    s.ifFalse &&= status === 'skipped' && m.reason === IF_FALSE;
  }
  const out = new Map<string, StepSummary>();
  const traced = (s: Step): boolean => {
    let found = seen.has(s.id);
    eachStep(children(s), (c) => (found ||= seen.has(c.id)));
    return found;
  };
  const show = (s: Step, status: StepStatus, from?: Seen, reason?: string): void => {
    out.set(s.id, {
      id: s.id,
      status,
      attempts: from?.attempts ?? 0,
      calls: from?.calls ?? 0,
      devices: from?.devices ?? emptyCounts(),
      ...(from?.confirmation ? { confirmation: from.confirmation } : {}),
      ...(from?.error && (status === 'failed' || status === 'cancelled') ? { error: from.error } : {}),
      ...((reason ?? from?.reason) && status === 'skipped' ? { reason: reason ?? from?.reason } : {}),
      ...(from?.note ? { note: from.note } : {}),
      // When it began: the step under way, and one that ended with both its times (outside any loop).
      ...(from?.startedAt && (status === 'running' || (from.endedAt && ENDED.has(status)))
        ? { startedAt: from.startedAt, ...(status === 'running' ? {} : { endedAt: from.endedAt }) }
        : {}),
    });
  };
  const all = (list: readonly Step[] | undefined, status: 'pending' | 'unreached'): void =>
    eachStep(list, (s) => show(s, status, seen.get(s.id)));

  /**
   * Shows the steps of `list` in `phase`, inside a loop (stepsOutsideLoops; `loop`: the loop's status as shown) or
   * not; how the list ended.
   */
  const walk = (list: readonly Step[] | undefined, phase: Phase, loop?: StepStatus): End => {
    if (phase === 'pending' || phase === 'unreached') {
      all(list, phase);
      return phase === 'pending' ? 'open' : 'stopped';
    }
    if (outsideLoopsOnly && list?.some((s) => !outside.has(s.id))) {
      for (const s of list) inside(s, phase, false, loop ?? 'running');
      return 'passed';
    }
    const steps = list ?? [];
    let last = -1;
    steps.forEach((s, i) => (last = traced(s) ? i : last));
    let end: End = 'passed';
    steps.forEach((s, i) => {
      if (end !== 'passed') return all([s], end === 'open' ? 'pending' : 'unreached');
      if (i < last && !traced(s)) {
        show(s, 'skipped', undefined, IF_FALSE);
        return all(children(s), 'unreached');
      }
      if (i > last + 1 || (i === last + 1 && phase === 'over')) {
        end = 'stopped';
        return all([s], 'unreached');
      }
      end = outside.has(s.id) ? one(s, phase) : inside(s, phase, i === last + 1, loop ?? 'running');
    });
    return end;
  };

  /** A step outside any loop (one checkpoint at most), in a list `live` or `over`. */
  const one = (s: Step, phase: 'live' | 'over'): End => {
    const own = seen.get(s.id);
    const status = own && [...own.by.keys()][0];
    const rescue = Array.isArray(s.onError) ? (s.onError as Step[]) : undefined;
    if (status === undefined || status === 'running') {
      // Under way (its checkpoint says so, its loop's iterations or its branches have begun, or it is next).
      const shown = phase === 'live' ? 'running' : 'cancelled';
      show(s, shown, own);
      if ('forEach' in s) walk(s.forEach.steps as Step[], phase, shown);
      if ('parallel' in s) for (const b of s.parallel as Step[]) walk([b], phase);
      all(rescue, phase === 'live' ? 'pending' : 'unreached');
      return phase === 'live' ? 'open' : 'stopped';
    }
    show(s, status as StepStatus, own);
    if ('forEach' in s) walk(s.forEach.steps as Step[], 'over', status as StepStatus);
    if ('parallel' in s) for (const b of s.parallel as Step[]) walk([b], 'over');
    if (status !== 'failed') {
      all(rescue, 'unreached');
      return status === 'cancelled' ? 'stopped' : 'passed';
    }
    if (rescue) return walk(rescue, phase);
    return s.onError === 'continue' ? 'passed' : 'stopped';
  };

  /**
   * A step inside a loop: over every iteration, `running` while the loop goes on (`live`: it is `next` or an
   * iteration reached it), else as the iterations ended it.
   */
  const inside = (s: Step, phase: 'live' | 'over', next: boolean, loop: StepStatus): End => {
    if (outsideLoopsOnly) {
      // Its iterations' checkpoints were not read: shown as its loop is, saying so.
      eachStep([s], (c) =>
        out.set(c.id, { ...blank(c.id, phase === 'live' ? 'running' : loop), note: UNCOUNTED }),
      );
      return 'passed';
    }
    const own = seen.get(s.id);
    // A loop inside a loop marks each start (runner/step-marks.ts): with none under way, it ended in every iteration
    // that began it, and shows how (its body too), while the loop it is in goes on.
    const ended =
      phase === 'live' && own && 'forEach' in s && !own.by.has('running') && !own.ifFalse
        ? (PRECEDENCE.find((p) => own.by.has(p)) ?? 'succeeded')
        : undefined;
    if (phase === 'live') {
      // Inside a loop only a step's first start and first skip by `if` are marked: one with no mark was never
      // begun nor skipped, one with only skips was skipped by every iteration that reached it so far.
      if ((!own && !traced(s)) || own?.ifFalse) {
        show(s, own ? 'skipped' : 'pending', own);
        all(children(s), 'pending');
        return own ? 'passed' : 'open';
      }
      show(s, ended ?? 'running', own);
    } else {
      // An iteration still under way when the run ended (its process died, and `runs cancel` ended it) was cut
      // short: cancelled, as the cancel of a live process would have ended it.
      const cut = own?.by.has('running');
      const status =
        PRECEDENCE.find((p) => own?.by.has(p) || (p === 'cancelled' && cut)) ??
        (own || next ? 'cancelled' : 'unreached');
      show(s, status, own);
    }
    if ('forEach' in s) walk(s.forEach.steps as Step[], ended ? 'over' : phase, ended ?? loop);
    if ('parallel' in s) for (const b of s.parallel as Step[]) walk([b], phase, loop);
    // A rescue runs in the iterations the step failed in.
    const rescue = Array.isArray(s.onError) ? (s.onError as Step[]) : undefined;
    if (own?.by.has('failed')) walk(rescue, phase, loop);
    else all(rescue, phase === 'live' ? 'pending' : 'unreached');
    // No iteration went past it (none reached it, or those that did are in it): the steps after it are to come.
    const past = own && [...own.by.keys()].some((st) => ENDED.has(st));
    return phase === 'live' && (own ? !past : next) ? 'open' : 'passed';
  };

  if (run === 'queued') all([...pb.steps, ...(pb.finally ?? [])], 'pending');
  else {
    const main = walk(pb.steps, ended || (pb.finally ?? []).some(traced) ? 'over' : 'live');
    walk(pb.finally, ended ? 'over' : main === 'open' ? 'pending' : 'live');
  }
  return everyStep([...out.values()], pb);
}

/**
 * The calls a dry run planned, from its checkpoints `marks` (StepMark.planned): each step's over its executions
 * (a loop's iterations), in the order of `steps` (checkpointSteps), as its summary's `planned` lists them.
 */
export function plannedOf(
  marks: ReadonlyMap<string, unknown>,
  steps: readonly StepSummary[],
): NonNullable<RunSummary['planned']> {
  const by = new Map<string, { step: string; action: string; calls: number; devices: number }>();
  for (const [key, value] of marks) {
    const p = (value as StepMark | null)?.planned;
    if (!p || typeof p.action !== 'string') continue;
    const step = stepOfKey(key);
    const sum = by.get(step) ?? { step, action: p.action, calls: 0, devices: 0 };
    sum.calls += p.calls ?? 0;
    sum.devices += p.devices ?? 0;
    by.set(step, sum);
  }
  return steps.flatMap((s) => by.get(s.id) ?? []);
}

/**
 * The steps of `pb` outside every loop, whose checkpoints are keyed by their ids alone (`each`, not `each[3]/note`):
 * all but those in a forEach's body, at any depth. A loop's rescue (its `onError` steps) runs once, after the loop
 * failed, outside it.
 */
export function stepsOutsideLoops(pb: Pick<Playbook, 'steps' | 'finally'>): Set<string> {
  const outside = new Set<string>();
  const add = (list: unknown): void => {
    if (!Array.isArray(list)) return;
    for (const s of list as Step[]) {
      outside.add(s.id);
      if ('parallel' in s) add(s.parallel);
      add(s.onError);
    }
  };
  add(pb.steps);
  add(pb.finally);
  return outside;
}

/**
 * `steps`, a run's, with every step of its playbook `pb`, in the playbook's order (`steps`, then `finally`, each
 * nested step after the one it is in, named in `within`): a step the run never entered is `unreached`, with no
 * attempt, no call and no device. A step `steps` has that `pb` does not name stays, last.
 */
export function everyStep(
  steps: readonly StepSummary[],
  pb: Pick<Playbook, 'steps' | 'finally'>,
): StepSummary[] {
  const recorded = new Map(steps.map((s) => [s.id, s]));
  const placed = new Set<string>();
  const out: StepSummary[] = [];
  for (const list of [pb.steps, pb.finally])
    eachStep(list, (s, within) => {
      if (typeof s.id !== 'string' || placed.has(s.id)) return;
      placed.add(s.id);
      const shown = recorded.get(s.id) ?? blank(s.id, 'unreached');
      out.push(within && shown.within !== within.id ? { ...shown, within: within.id } : shown);
    });
  return [...out, ...steps.filter((s) => !placed.has(s.id))];
}

/** What a step inside a loop says when its iterations' checkpoints were not read (run-views.ts MARKS_READ). */
export const UNCOUNTED =
  'its loop has run too many iterations to count while the run goes on: shown as its loop is; counted when the run ends';

function blank(id: string, status: StepStatus): StepSummary {
  return { id, status, attempts: 0, calls: 0, devices: emptyCounts() };
}

/** The devices of a run, from its steps `steps` (checkpointSteps) of its playbook version `pb`. */
export function devicesOf(
  steps: readonly StepSummary[],
  pb: Pick<Playbook, 'steps' | 'finally'>,
): DeviceCounts {
  const loops = new Set<string>();
  for (const list of [pb.steps, pb.finally]) eachStep(list, (s) => 'forEach' in s && loops.add(s.id));
  const c = emptyCounts();
  // A forEach's devices are its body's, counted by its own steps (as a run's summary counts them).
  for (const s of steps) if (!loops.has(s.id)) addCounts(c, s.devices);
  return c;
}

function children(s: Step): Step[] {
  return nestedLists(s).flat();
}

const NONE_CONFIRMED: Confirmation = { callback: 0, requestStatus: 0, stateRead: 0 };

function addConfirmation(into: Confirmation, c: Confirmation): void {
  into.callback += c.callback ?? 0;
  into.requestStatus += c.requestStatus ?? 0;
  into.stateRead += c.stateRead ?? 0;
}

/** The id of the step a checkpoint's key names: the key is the id after its loops' iterations (`outer[2]/inner[0]/id`). */
function stepOfKey(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}
