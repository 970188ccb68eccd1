/**
 * `fleetbook runs cancel ID`: cancels an unfinished run.
 * - A run a live process holds (a daemon, a replica, a `fleetbook run`): that process is asked to cancel it
 *   (Ownership.requestCancel), and does at its next lease renewal, as its console's Cancel or a Ctrl-C would: the
 *   run's `finally` steps run there.
 * - A run no live process holds: ended here, without starting it. The way out when `serve` will not start for a
 *   run it cannot resume (a secret it reads is gone), or for a run a killed `fleetbook run` left. The run is
 *   claimed like any orphaned run, so a daemon or a replica that takes it up at that moment does not also resume
 *   it. Nothing is sent to the service: its `finally` steps do not run, and its devices keep the outcomes the
 *   ledger has, but for those whose request the service accepted and no one confirmed: nobody looks for their
 *   outcome now, so they are `unconfirmed` (and a daemon records the service's message for them if it comes).
 *   A call that changes devices sent before the process died, its answer never recorded (a `sending`
 *   checkpoint, or a `confirming` one that marks a devices.retry pass's send), has an outcome nobody knows, and no
 *   result in the ledger (a device a pass sent again keeps its result of the pass before): the run's error and the
 *   command's output say so.
 */
import { isoTime } from '../clock.js';
import type { Config } from '../config.js';
import { countDevices } from '../runner/context.js';
import { groupResults } from '../runner/devices.js';
import { sendsOf, sentBeforeRequests } from '../runner/strategies/sends.js';
import type { KeptRequest } from '../runner/types.js';
import { parseDuration } from '../playbook/duration.js';
import { Lease, liveHolder, ownerText } from '../store/lease.js';
import { stepsOfEnded } from '../store/run-views.js';
import {
  addCounts,
  emptyCounts,
  type DeviceCounts,
  type DeviceResult,
  type RunRecord,
  type Store,
} from '../store/store.js';

const CANCELLED_OFFLINE =
  'cancelled by `fleetbook runs cancel` while no process held it: its finally steps did not run';
/** The reason of a run a live process holds, cancelled there on request. */
const CANCELLED_HELD = 'cancelled by `fleetbook runs cancel`';

/** Cancels `run`; the exit code, having said what happened. */
export async function cancelRun(store: Store, run: RunRecord, config: Config): Promise<number> {
  if (run.status !== 'queued' && run.status !== 'running') return alreadyEnded(run);
  const lease = await Lease.acquire({
    store,
    role: 'run',
    exclusive: false,
    leaseMs: parseDuration(config.lease) ?? 15_000,
    onLost: () => undefined,
  });
  try {
    const [claimed] = await store.claimRuns(lease.id, undefined, Date.now(), run.id);
    if (!claimed) {
      // A live process holds it: it is asked to cancel the run, which it does at its next lease renewal.
      const now = await store.getRun(run.id);
      if (!now || !(await store.requestCancel(run.id, CANCELLED_HELD))) return alreadyEnded(now ?? run);
      const holder = await liveHolder(store, now);
      const who = holder ? ownerText(holder) : 'the process that holds it';
      process.stdout.write(
        `run ${run.id} of ${run.playbook} is held by ${who}: asked it to cancel the run, which it does at its next lease renewal (within a third of FLEETBOOK_LEASE); its finally steps run there. Follow it: fleetbook runs show ${run.id}\n`,
      );
      return 0;
    }
    const endedAt = isoTime(Date.now());
    // Its checkpoints, read once: what calls were under way, and what requests its accepted devices were sent in.
    const checkpoints = await store.loadSteps(run.id);
    const { devices, byStep } = await endDevices(store, run.id, endedAt, checkpoints);
    // The steps its process ended as they ended, from their checkpoints; the devices of each as the ledger has
    // them now (those left accepted `unconfirmed`).
    const steps = (await stepsOfEnded(store, run)).map((s) => {
      const counted = byStep.get(s.id);
      return counted ? { ...s, devices: counted } : s;
    });
    const unknown = callsUnderWay(checkpoints);
    const error = unknown.length
      ? `${CANCELLED_OFFLINE}; the outcome of ${unknown.length === 1 ? 'a call' : `${unknown.length} calls`} under way when its process stopped is unknown (${unknown.join(', ')})`
      : CANCELLED_OFFLINE;
    store.updateRun(run.id, {
      status: 'cancelled',
      endedAt,
      error,
      // Counted from the ledger: the results recorded late while the run went on are in it already.
      movesCounted: true,
      summary: {
        runId: run.id,
        playbook: run.playbook,
        ...(run.version ? { version: run.version } : {}),
        status: 'cancelled',
        startedAt: run.startedAt,
        endedAt,
        error,
        steps,
        devices,
      },
    });
    await store.durable();
    const kept = (['succeeded', 'failed', 'skipped', 'unconfirmed'] as const)
      .filter((o) => devices[o] > 0)
      .map((o) => `${devices[o]} ${o}`);
    process.stdout.write(
      `run ${run.id} of ${run.playbook} cancelled; its finally steps did not run.\n` +
        (kept.length
          ? `Its devices keep the outcomes recorded: ${kept.join(', ')}${devices.unconfirmed ? ' (unconfirmed: the service took their request, and its outcome was not confirmed; a daemon records it if the service sends it later)' : ''}. List them: fleetbook runs show ${run.id} --devices\n`
          : 'It had recorded no device outcome.\n') +
        (unknown.length
          ? `Its process stopped after it had sent ${unknown.length === 1 ? 'a call that changes devices, before its answer was' : `${unknown.length} calls that change devices, before their answers were`} recorded (${unknown.join(', ')}): what the service did is unknown, and the ledger records no result of it for those devices. Read their state (devices.list) before acting on them again.\n`
          : ''),
    );
    return 0;
  } finally {
    await lease.release();
  }
}

function alreadyEnded(run: RunRecord): number {
  process.stderr.write(`fleetbook: run ${run.id} has already ended (${run.status}): nothing to cancel\n`);
  return 1;
}

/**
 * The steps (by key) whose checkpoint says a call that changes devices was sent and its answer never recorded: a
 * first call (`sending`), or the request of a devices.retry pass after the first (`confirming` with `sendingPass`).
 */
function callsUnderWay(checkpoints: ReadonlyMap<string, unknown>): string[] {
  const keys: string[] = [];
  for (const [key, cp] of checkpoints) {
    const c = cp as { status?: unknown; sendingPass?: unknown } | null;
    if (c?.status === 'sending' || (c?.status === 'confirming' && c.sendingPass)) keys.push(key);
  }
  return keys;
}

/**
 * The run's devices by their latest outcome in each step, counted as a run's are, a page of the ledger at a time,
 * in all and by step. Those still `accepted` are recorded `unconfirmed`, under their request id, once the ledger
 * has been read.
 */
async function endDevices(
  store: Store,
  runId: string,
  at: string,
  checkpoints: ReadonlyMap<string, unknown>,
): Promise<{ devices: DeviceCounts; byStep: Map<string, DeviceCounts> }> {
  const c = emptyCounts();
  const byStep = new Map<string, DeviceCounts>();
  /** The devices left accepted, by step. */
  const accepted = new Map<string, DeviceResult[]>();
  // Each row is one device of one step: no two of a page are to be merged.
  for await (const page of store.eachDeviceResult(runId)) {
    addCounts(c, countDevices(groupResults(page, true)));
    const steps = new Map<string, typeof page>();
    for (const r of page) {
      const rows = steps.get(r.step);
      if (rows) rows.push(r);
      else steps.set(r.step, [r]);
    }
    for (const [step, rows] of steps) {
      const counted = byStep.get(step) ?? emptyCounts();
      addCounts(counted, countDevices(groupResults(rows, true)));
      byStep.set(step, counted);
    }
    for (const r of page) {
      if (r.outcome !== 'accepted') continue;
      const { deviceId, kind, attempts, requestId } = r;
      const left = accepted.get(r.step) ?? [];
      left.push({ deviceId, kind, attempts, outcome: 'unconfirmed', ...(requestId ? { requestId } : {}) });
      accepted.set(r.step, left);
    }
  }
  if (accepted.size) await withSends(store, runId, checkpoints, accepted);
  for (const [step, left] of accepted) {
    store.recordDevices(runId, step, groupResults(left, true), at);
    for (const counted of [c, byStep.get(step)!]) {
      counted.accepted -= left.length;
      counted.unconfirmed += left.length;
    }
  }
  return { devices: c, byStep };
}

/**
 * The devices left `accepted` (by step) with the sends made for them as their attempts: their entries carry their
 * request's own sends, and the sends before it are rebuilt from their results under the earlier requests of the
 * checkpoint that keeps it, as a resumed run does (runner/strategies/sends.ts).
 */
async function withSends(
  store: Store,
  runId: string,
  checkpoints: ReadonlyMap<string, unknown>,
  accepted: Map<string, DeviceResult[]>,
): Promise<void> {
  /** The requests of each `confirming` checkpoint, by the id of each of them. */
  const keptWith = new Map<string, KeptRequest[]>();
  for (const cp of checkpoints.values()) {
    const kept = (cp as { accepted?: unknown } | null)?.accepted;
    if (Array.isArray(kept)) for (const r of kept as KeptRequest[]) keptWith.set(r.requestId, kept);
  }
  for (const [step, left] of accepted) {
    const lists = new Set<KeptRequest[]>();
    for (const r of left) {
      const kept = r.requestId ? keptWith.get(r.requestId) : undefined;
      if (kept) lists.add(kept);
    }
    for (const kept of lists) {
      const under = await store.resultsUnder(
        runId,
        step,
        kept.map((r) => r.requestId),
      );
      const before = sentBeforeRequests(kept, under);
      for (const r of left)
        if (r.requestId && before.has(r.requestId))
          r.attempts = sendsOf(before.get(r.requestId), r.deviceId, r.attempts);
    }
  }
}
