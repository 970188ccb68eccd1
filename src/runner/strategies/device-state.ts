/**
 * A device-state action (suspend, restore, activate, deactivate, plan change): the service answers a request
 * id, and each device's outcome comes later. The strategy sends the request (with the step's retries), records
 * its devices `accepted` under the request id with a `confirming` checkpoint, in one write, and then has each
 * device confirmed (confirm.ts). A resumed run confirms what an earlier execution had accepted, and first
 * reads the devices' state when an earlier execution sent a request (the first pass's, or a devices.retry pass's)
 * and stopped before its answer, so that no device is changed twice.
 */
import type { OwnDeviceType } from '../../api/device-errors.js';
import { retrying } from '../../retry.js';
import type { Confirmation, DeviceGroup } from '../../store/store.js';
import { cancelled, cancelledInFlight, stopped } from '../cancel.js';
import { errorOf, unknownOutcome, selects } from '../context.js';
import { DeviceResults } from '../device-results.js';
import { pushItem } from '../stored-items.js';
import {
  devicesOf,
  idsOf,
  MALFORMED_ANSWER,
  type MalformedAnswer,
  OUTCOME_UNKNOWN,
  runsOf,
  setOf,
  subset,
  withDevices,
  withResult,
  type DeviceSet,
} from '../devices.js';
import { InputError, NetworkError } from '../../errors.js';
import {
  Interrupted,
  StepError,
  type AcceptedRequest,
  type Checkpoint,
  type ItemRuns,
  type Json,
  type KeptRequest,
  type StepState,
} from '../types.js';
import { requestIdOf, withoutRequestId } from './call.js';
import { confirmRequests, readApplied, readInAccount } from './confirm.js';
import { withDeviceRetries, FIRST_PASS, type RetryPass } from './device-retry.js';
import type { ActionCall } from './index.js';
import { sentBeforeRequests, withSends, type Sends } from './sends.js';

export async function deviceState(x: ActionCall): Promise<StepState> {
  const { ctx, step } = x;
  // The service would act on a whole device group; the engine must know each device to lock, record and
  // confirm it. Literal arguments are refused by validation already; this is for a `with` computed whole.
  if (!Array.isArray(x.input.devices))
    throw new StepError(
      `${x.action}: a step names the devices it acts on in \`devices\` (select a group's first with devices.list { groupName })`,
    );
  const results = new DeviceResults();
  const tally: Confirmation = { callback: 0, requestStatus: 0, stateRead: 0 };
  /** Every request of this step the service accepted, in order: what its checkpoint keeps. */
  const accepted: AcceptedRequest[] = [];
  let resumed = x.resumed;
  /**
   * Results in the ledger already: those an earlier execution recorded (stopped while it confirmed), and those this
   * one wrote with a later pass's checkpoint (the mark of its send, or its `accepted` entries). Counted, not written
   * again.
   */
  const recorded = new Set<string>();
  /** The results so far not in the ledger, `recorded` from now: the write at hand has them. */
  const unwrittenResults = () => {
    const unwritten = notRecorded([...results.history()], recorded);
    for (const g of unwritten) for (const id of g.ids) recorded.add(resultKey(g, id));
    return unwritten;
  };
  /** A pass after the first that an earlier execution was sending when it stopped (Checkpoint.sendingPass). */
  let cutOff = x.resumed?.status === 'confirming' ? x.resumed.sendingPass : undefined;
  /** The output of the last request accepted: what the checkpoint keeps. */
  let lastOutput: unknown = null;
  try {
    const from = resumedPass(x.resumed);
    const { output } = await withDeviceRetries(x, results, from, async (input, attempt, rule) => {
      const earlier = resumed;
      resumed = undefined;
      if (earlier?.status === 'confirming') {
        // Accepted before the restart: confirm, never send again; what was confirmed then stays as it was.
        const kept = earlier.accepted ?? [];
        const under = await ctx.o.store.resultsUnder(
          ctx.id,
          step.id,
          kept.map((r) => r.requestId),
          true,
        );
        const requests = devicesOfRequests(kept, under);
        // The sends before each request, from the devices' results before its pass (sends.ts).
        const sentBefore = sentBeforeRequests(kept, under);
        for (const r of requests) r.before = sentBefore.get(r.requestId);
        accepted.push(...requests);
        // With the results under the requests, those reads of the devices' state recorded (no request id): a device
        // whose latest they are is settled, neither read nor sent again.
        const read = lastReads(under, new Set(idsOf(x.devices)));
        const before = under.filter((g) =>
          g.requestId === undefined ? byRead(g) : g.outcome !== 'accepted',
        );
        for (const g of before) for (const id of g.ids) recorded.add(resultKey(g, id));
        // Each device's result is to come under the last request that sent it: one under a request before (a pass
        // that sent it again) is not its latest, and it is not confirmed there again.
        const latest = latestOnly(requests);
        const waits = new Set(
          latest.flatMap((r) => r.devices.flatMap(([, ids]) => ids.map((id) => resultKey(r, id)))),
        );
        results.add(
          keepIds(before, (g, id) => (read.has(id) ? read.get(id) === g : waits.has(resultKey(g, id)))),
        );
        await confirmRequests(
          x,
          latest.map((r) => unconfirmedOf(r, recorded)),
          results,
          tally,
        );
        lastOutput = earlier.output ?? null;
        return lastOutput;
      }
      let remaining = input === x.input ? x.devices : devicesOf(x.op, input);
      // A devices.retry pass: the sends each device had before it, which its attempts go on from (sends.ts).
      const before = attempt > 1 ? results.attemptsOf(new Set(idsOf(remaining))) : undefined;
      // The first pass only: a device retried later was sent this step's own request, not another holder's.
      if (x.contended && !earlier && attempt === 1 && remaining.size)
        remaining = await skipDone(x, input, remaining, results);
      /**
       * When an earlier execution sent this pass and stopped before its answer: the first pass (`sending`), or one
       * after it (`sendingPass`, the pass the step goes on with after the requests it confirmed).
       */
      const since =
        earlier?.status === 'sending'
          ? (earlier.since ?? ctx.clock.now())
          : cutOff?.rule === rule && cutOff.attempt === attempt
            ? cutOff.since
            : undefined;
      cutOff = undefined;
      /** Sends made before this execution: one, by an earlier execution that stopped before its answer. */
      let sentBefore = 0;
      if (since !== undefined) {
        // Watched from when the earlier execution sent it: a process down longer than that reads once.
        sentBefore = 1;
        // The first pass taken up again: what an earlier execution's read of the devices' state found is kept.
        if (earlier?.status === 'sending') remaining = await keptReads(x, remaining, results, recorded);
        const until = since + x.plan.confirmMs;
        remaining = await reconcile(x, input, remaining, { before, n: 1 }, results, tally, until);
        ctx.log.info('reconciled after a restart', { step: step.id, remaining: remaining.size });
      }
      if (!remaining.size) return null;
      // A pass after the first says that it is being sent, before its request leaves, as the first pass's `sending`
      // checkpoint does: a resumed run reads its devices' state before it sends them again. The results of the
      // passes before go with it: a resumed run takes them from the ledger, not from a look at the devices' state,
      // which this pass's request may have changed.
      if (rule >= 0) {
        const unwritten = unwrittenResults();
        ctx.saveUnderWay(
          x.count,
          x.key,
          {
            status: 'confirming',
            accepted: accepted.map(withoutDevices),
            output: lastOutput,
            sendingPass: { rule, attempt, since: ctx.clock.now() },
          },
          unwritten.length ? { step: step.id, groups: unwritten, at: ctx.now() } : undefined,
        );
      }
      const sent = await send(x, input, remaining, { before, n: sentBefore }, results, tally);
      if (!sent) return null;
      // A pass after the first says so in the checkpoint: a resumed run goes on from it (withDeviceRetries).
      if (rule >= 0) sent.request.pass = { rule, attempt };
      accepted.push(sent.request);
      // The accepted devices and the checkpoint that says what to confirm, in one write. The entries carry the
      // request's own sends, as its checkpoint keeps them, so that every version finds them (sends.ts).
      const acceptedGroups = withResult(setOf(sent.request.devices), {
        outcome: 'accepted',
        attempts: sent.request.attempts,
        requestId: sent.request.requestId,
      });
      // Before them, the results so far not in the ledger (those of the passes before, when the mark of this pass's
      // send did not have them; those its send read): a device this pass sends again has its older result before its
      // `accepted` entry, so that the ledger's latest is true at every moment.
      const unwritten = unwrittenResults();
      // The checkpoint names the requests, not their devices again: the ledger entries written with it hold them.
      ctx.saveUnderWay(
        x.count,
        x.key,
        { status: 'confirming', accepted: accepted.map(withoutDevices), output: sent.output },
        { step: step.id, groups: [...unwritten, ...acceptedGroups], at: ctx.now() },
      );
      lastOutput = sent.output;
      await confirmRequests(x, [sent.request], results, tally);
      return sent.output;
    });
    const state = ctx.finishDevices(step.id, output, results.groups());
    x.count.confirmed(tally);
    return { ...state, ledger: notRecorded(state.ledger ?? [], recorded) };
  } catch (e) {
    // The step fails, but devices were touched: the ledger and the summary count them.
    const done = new Set([
      ...recorded,
      ...results.history().flatMap((g) => g.ids.map((id) => resultKey(g, id))),
    ]);
    // Those accepted and not confirmed: interrupted, still `accepted` (written with the checkpoint), and the
    // resumed run confirms them. Otherwise the step has stopped looking (a cancel, its timeout, an error):
    // `unconfirmed`, with the request id, so that the daemon records the service's message if it comes later.
    const interrupted = x.signal?.aborted && x.signal.reason instanceof Interrupted;
    const waiting = acceptedWithoutResult(
      accepted,
      done,
      interrupted ? 'accepted' : 'unconfirmed',
      x.signal?.aborted ? {} : errorOf(e),
    );
    // A device waiting under a pass's request: its result of a pass before is not its latest.
    const waits = new Set(waiting.flatMap((g) => g.ids));
    const groups = keepIds(results.groups(), (_, id) => !waits.has(id));
    if (groups.length || waiting.length) {
      ctx.recordLedger(step.id, notRecorded(interrupted ? groups : [...groups, ...waiting], recorded));
      ctx.countFailing(x.count, [...groups, ...waiting]);
      x.count.confirmed(tally);
    }
    throw e;
  }
}

/**
 * The devices.retry pass a step resumed while it confirmed was in: that of the last request its checkpoint keeps;
 * the first when it names none (the first pass's request, or a checkpoint of an earlier version).
 */
function resumedPass(cp: Checkpoint | undefined): RetryPass {
  return (cp?.status === 'confirming' ? cp.accepted?.at(-1)?.pass : undefined) ?? FIRST_PASS;
}

/**
 * Sends the request for `devices` with the step's retry policy. An answer lost after the service may have
 * acted is reconciled by reading which devices are already in the target state; only the others are sent
 * again. Returns the accepted request, or undefined when no device is left to send.
 */
async function send(
  x: ActionCall,
  input: Json,
  devices: DeviceSet,
  pass: Sends,
  results: DeviceResults,
  tally: Confirmation,
): Promise<{ request: AcceptedRequest; output: unknown } | undefined> {
  const { before } = pass;
  const { ctx, step, plan } = x;
  let remaining = devices;
  /** How many devices the input names: while all of them are still to do, it is sent as it is. */
  const named = input === x.input ? x.devices.size : devicesOf(x.op, input).size;
  /** When the last attempt left, on the run's clock: an unknown outcome is watched from then. */
  let sentAt = ctx.clock.now();
  /**
   * An answer refused (no request id, or one with a NUL), with the input and the sends it answered: the step fails
   * with it, once it is reconciled.
   */
  let refused: { answer: MalformedAnswer; sending: Json; n: number } | undefined;
  for (let n = pass.n + 1; ; n++) {
    try {
      // The input as it is while every device it names is still to do (the first attempt, usually).
      const sending = remaining.size === named ? input : withDevices(input, new Set(idsOf(remaining)));
      sentAt = ctx.clock.now();
      const output = await ctx.call(x.count, x.action, sending, x.signal);
      x.count.attempt();
      const { requestId, refused: malformed } = requestIdOf(x.action, output);
      if (!requestId) {
        // An answer without a request id, or with one no store can keep, is not the `{ requestId }` a device
        // action answers: nothing can follow the request. Its devices' state is read, after the loop.
        const answer =
          malformed ??
          withoutRequestId(x.action, 'a device action answers with', "; its devices' state was read instead");
        refused = { answer, sending, n };
        break;
      }
      const request: AcceptedRequest = {
        requestId,
        accountName: String(input.accountName),
        devices: runsOf(remaining),
        attempts: n,
        ...(before?.size ? { before } : {}),
        at: ctx.clock.now(),
      };
      return { request, output };
    } catch (e) {
      // A call that failed is an attempt, whatever follows: reconciled, given up, or retried; one whose input the
      // client refused (FB_INPUT) left nothing and reached nothing.
      if (!(e instanceof InputError)) x.count.attempt();
      if (stopped(x.signal, e)) throw e;
      if (cancelled(x.signal, e)) {
        // The step ends here. A request that may have reached the service (cut off once it began to be written, its
        // answer not read) leaves what it did unknown: `unconfirmed`, never `failed`, which says it did nothing. One
        // that never left (refused for the cancel, cut off before its first byte) did nothing: the devices keep the
        // result they had (none, in the first pass), as a cancel leaves those of a step it stopped.
        if (cancelledInFlight(e)) results.add(withSends(remaining, OUTCOME_UNKNOWN, before, n));
        throw e;
      }
      const unknown = unknownOutcome(e);
      if (unknown) {
        // A lost answer may hide a request the carrier is still carrying out: watched. The service's own error
        // answer (a 5xx) took nothing to carry out later: one read finds what it did change.
        const lost = e instanceof NetworkError;
        const until = lost ? sentAt + plan.confirmMs : 0;
        remaining = await reconcile(x, input, remaining, { before, n }, results, tally, until);
        ctx.log.info('reconciled an unknown outcome', { step: step.id, remaining: remaining.size });
        if (!remaining.size) {
          return undefined;
        }
      }
      if (n - pass.n >= plan.retry.maxAttempts || !selects(plan.retry.on, e)) {
        // An answer lost for good leaves what the service did unknown: not `failed`, which says it did not. The
        // devices' attempts are the sends made for them (sends.ts): not the most the step's retry allows, which
        // an error it does not retry never reaches. An input the client refused (FB_INPUT) was not a send.
        const outcome = unknown ? 'unconfirmed' : 'failed';
        results.add(
          withSends(remaining, { outcome, ...errorOf(e) }, before, e instanceof InputError ? n - 1 : n),
        );
        throw e;
      }
      await ctx.clock.sleep(ctx.delay(plan.retry, n - pass.n), x.signal);
    }
  }
  // Outside the loop's catch: a refused answer is neither an unknown outcome nor retried, and a read of the devices'
  // state that fails is a read's (reconcile records the devices it leaves), never the send's, which would record over
  // the devices a read found changed, or send them again. The devices' state says what happened; the others are
  // unconfirmed, and the step fails with the refusal (docs/spec-decisions.md, "Asynchronous requests").
  const { answer, sending, n } = refused as NonNullable<typeof refused>;
  remaining = await reconcile(x, sending, remaining, { before, n }, results, tally, sentAt + plan.confirmMs);
  results.add(withSends(remaining, { outcome: 'unconfirmed', ...MALFORMED_ANSWER }, before, n));
  throw answer;
}

/**
 * After an answer that confirms nothing (lost once the service may have acted, or without a request id): which
 * of `devices` the service did change, read from their state, and the others. The service may still be carrying
 * out the request (the carrier acts later, as for an accepted one), and sending it again then would change a
 * device twice: the state is read again every confirmation poll interval until every device is changed or
 * `until` (on the run's clock) has passed; only then are the others returned, to be sent again. A device the
 * account does not have (unknown to the service, or gone since) can reach no state: as the first wait begins, the
 * account's listing is read once for the devices left; those it lacks are neither read again nor waited for, and
 * when no other is left they are returned at once, for the service's answer to them to say why. Each read has
 * the step's retries (it changes nothing: it is asked again on the errors `retry.on` selects). When one still fails, what the service did is unknown: the devices left are
 * recorded `unconfirmed` with the read's error (`OUTCOME UNKNOWN` when a cancel ends a read or the wait for the next),
 * never left out of the ledger nor sent again, and the step fails.
 */
async function reconcile(
  x: ActionCall,
  input: Json,
  devices: DeviceSet,
  pass: Sends,
  results: DeviceResults,
  tally: Confirmation,
  until: number,
): Promise<DeviceSet> {
  const { ctx, plan } = x;
  const interval = plan.confirmPollMs ?? ctx.o.pollIntervalMs ?? 5000;
  const accountName = String(input.accountName);
  let left = devices;
  /** Of the devices left, those the account does not have, once looked up: they are neither read nor waited for. */
  let absent: Set<string> | undefined;
  for (;;) {
    const ids = new Set(idsOf(left).filter((id) => !absent?.has(id)));
    const applied = await read(() => readApplied(x, accountName, input, ids));
    const done = subset(left, applied, true);
    results.add(withSends(done, { outcome: 'succeeded' }, pass.before, pass.n));
    tally.stateRead += done.size;
    left = subset(left, applied, false);
    const wait = until - ctx.clock.now();
    if (!left.size || wait <= 0) return left;
    if (!absent) {
      const named = new Set(idsOf(left));
      const has = await read(() => readInAccount(x, accountName, named));
      absent = new Set([...named].filter((id) => !has.has(id)));
      if (absent.size)
        ctx.log.info('devices the account does not have: not waited for', {
          step: x.step.id,
          devices: absent.size,
        });
    }
    if (absent.size === left.size) return left;
    try {
      await ctx.clock.sleep(Math.min(interval, wait), x.signal);
    } catch (e) {
      unknownLeft(e);
      throw e;
    }
  }

  /** A read of the devices' state or the account's, with the step's retries; one that still fails records those left. */
  async function read(listing: () => Promise<Set<string>>): Promise<Set<string>> {
    try {
      const { value } = await retrying(listing, {
        maxAttempts: plan.retry.maxAttempts,
        retryable: (e) => selects(plan.retry.on, e),
        delay: (n) => ctx.delay(plan.retry, n),
        sleep: (ms) => ctx.clock.sleep(ms, x.signal),
      });
      return value;
    } catch (e) {
      unknownLeft(e);
      throw e;
    }
  }

  /**
   * The devices not found changed when a read fails with `e`, or a cancel ends the wait for the next one: what the
   * request did to them is unknown, `unconfirmed` (with the read's error; `OUTCOME UNKNOWN` for a cancel, which
   * nothing follows). A stop records nothing: the resumed run reads their state.
   */
  function unknownLeft(e: unknown): void {
    if (stopped(x.signal, e)) return;
    const result = cancelled(x.signal, e)
      ? OUTCOME_UNKNOWN
      : { outcome: 'unconfirmed' as const, ...errorOf(e) };
    results.add(withSends(left, result, pass.before, pass.n));
  }
}

/**
 * After a wait for another holder of some of the devices (another run, another process): those it left in the
 * target state are `skipped` (ALREADY IN TARGET STATE), not sent a second request; returns the others. A read
 * that fails leaves every device to send, as without the wait.
 */
async function skipDone(
  x: ActionCall,
  input: Json,
  devices: DeviceSet,
  results: DeviceResults,
): Promise<DeviceSet> {
  let applied: Set<string>;
  try {
    applied = await readApplied(x, String(input.accountName), input, new Set(idsOf(devices)));
  } catch (e) {
    x.ctx.log.warn('could not read the state of devices another holder had', {
      step: x.step.id,
      error: (e as Error).message,
    });
    return devices;
  }
  const done = subset(devices, applied, true);
  // Not sent: no attempt, as a device a limit skips.
  results.add(withResult(done, { outcome: 'skipped', errorType: ALREADY_DONE, attempts: 0 }));
  if (done.size)
    x.ctx.log.info('devices already in the target state, skipped', { step: x.step.id, devices: done.size });
  return subset(devices, applied, false);
}

/** Why a device is skipped that a holder before this step left in the action's target state. */
const ALREADY_DONE: OwnDeviceType = 'ALREADY IN TARGET STATE';

/**
 * Whether ledger entry `g` is what a read of the devices' state recorded: under no request id, a device found in the
 * action's target state (`succeeded`, or `skipped` after a wait for another holder). A step's other entries under
 * none end it (a failure), or are a stop's own that a version before wrote (`ERROR`), which a resumed run reads again.
 */
const byRead = (g: DeviceGroup) =>
  g.requestId === undefined && (g.outcome === 'succeeded' || g.outcome === 'skipped');

/**
 * Of a step's ledger entries (in their order), each device's last one that a read of the devices' state recorded
 * (byRead), by device, unless a request named the device after it, of the devices of this execution (`of`): the
 * step's entries under no request id are those of every iteration of a loop it is in. A read's result settles a
 * device: a resumed run keeps it, and neither reads the device's state nor sends it again (the read has no request id
 * to find it by).
 */
function lastReads(entries: readonly DeviceGroup[], of: ReadonlySet<string>): Map<string, DeviceGroup> {
  const read = new Map<string, DeviceGroup>();
  for (const g of entries) {
    if (byRead(g)) {
      for (const id of g.ids) if (of.has(id)) read.set(id, g);
    } else if (g.requestId !== undefined) for (const id of g.ids) read.delete(id);
  }
  return read;
}

/**
 * The first pass resumed from `sending`: the results an earlier execution's reads of the devices' state recorded (it
 * was stopped after them, before its request was accepted), added to `results` and `recorded`; returns the others.
 */
async function keptReads(
  x: ActionCall,
  devices: DeviceSet,
  results: DeviceResults,
  recorded: Set<string>,
): Promise<DeviceSet> {
  const entries = await x.ctx.o.store.resultsUnder(x.ctx.id, x.step.id, [], true);
  const read = lastReads(entries, new Set(idsOf(devices)));
  if (!read.size) return devices;
  const kept = keepIds([...new Set(read.values())], (g, id) => read.get(id) === g);
  for (const g of kept) for (const id of g.ids) recorded.add(resultKey(g, id));
  results.add(kept);
  return subset(devices, new Set(read.keys()), false);
}

/**
 * A device's result under a request (a group of results, or the request): the service's request ids are unique,
 * and a device's attempts under one differ between its `accepted` entry and its result (sends.ts).
 */
const resultKey = (under: { requestId?: string }, id: string) => `${under.requestId ?? ''}\0${id}`;

/** An accepted request as its checkpoint keeps it: its devices are in the ledger, and their sends before it. */
function withoutDevices({ devices: _, before: __, ...kept }: AcceptedRequest): KeptRequest {
  return kept;
}

/**
 * The requests a `confirming` checkpoint names, with their devices: those of the `accepted` entries written with it
 * (`under` each request id and attempt, in their order), or, of a checkpoint an earlier version wrote, its own.
 */
function devicesOfRequests(kept: KeptRequest[], under: DeviceGroup[]): AcceptedRequest[] {
  const byRequest = new Map<string, ItemRuns>();
  for (const g of under) {
    if (g.outcome !== 'accepted') continue;
    const key = resultKey(g, '');
    const runs = byRequest.get(key) ?? [];
    for (const id of g.ids) pushItem(runs, g.kind, id);
    byRequest.set(key, runs);
  }
  return kept.map((r) => ({ ...r, devices: r.devices ?? byRequest.get(resultKey(r, '')) ?? [] }));
}

/** An accepted request without the devices whose result under it is `recorded`. */
function unconfirmedOf(r: AcceptedRequest, recorded: Set<string>): AcceptedRequest {
  return {
    ...r,
    devices: r.devices.map(([kind, ids]) => [kind, ids.filter((id) => !recorded.has(resultKey(r, id)))]),
  };
}

/** `groups` without the results `recorded` (by resultKey): the ledger has them already. */
function notRecorded(groups: DeviceGroup[], recorded: Set<string>): DeviceGroup[] {
  if (!recorded.size) return groups;
  return keepIds(groups, (g, id) => !recorded.has(resultKey(g, id)));
}

/** `groups` with the devices `keep` selects, each group's data with them. */
function keepIds(groups: DeviceGroup[], keep: (g: DeviceGroup, id: string) => boolean): DeviceGroup[] {
  return groups.flatMap((g) => {
    const kept = g.ids.map((id) => keep(g, id));
    const ids = g.ids.filter((_, i) => kept[i]);
    if (ids.length === g.ids.length) return [g];
    if (!ids.length) return [];
    return [g.data ? { ...g, ids, data: g.data.filter((_, i) => kept[i]) } : { ...g, ids }];
  });
}

/**
 * `requests` (in the order they were sent) with the devices no later one names: a device a later pass sent again
 * has its latest result under that pass's request.
 */
function latestOnly(requests: readonly AcceptedRequest[]): AcceptedRequest[] {
  const later = new Set<string>();
  const out: AcceptedRequest[] = [];
  for (let i = requests.length - 1; i >= 0; i--) {
    const r = requests[i] as AcceptedRequest;
    const devices = r.devices.map(
      ([kind, ids]) => [kind, ids.filter((id) => !later.has(id))] as [string, string[]],
    );
    for (const [, ids] of r.devices) for (const id of ids) later.add(id);
    out.push({ ...r, devices });
  }
  return out.reverse();
}

/**
 * The devices of accepted requests that have no result under the last request that sent them (none is `done`, by
 * resultKey), as groups with `outcome`: still `accepted` with the request's own sends, or `unconfirmed` with the
 * sends made for them (sends.ts).
 */
function acceptedWithoutResult(
  accepted: AcceptedRequest[],
  done: ReadonlySet<string>,
  outcome: 'accepted' | 'unconfirmed',
  why: Pick<DeviceGroup, 'errorType' | 'errorClass'>,
): DeviceGroup[] {
  return latestOnly(accepted).flatMap((r) =>
    withSends(
      setOf(
        r.devices.map(
          ([kind, ids]) => [kind, ids.filter((id) => !done.has(resultKey(r, id)))] as [string, string[]],
        ),
      ),
      { outcome, ...why, requestId: r.requestId },
      outcome === 'accepted' ? undefined : r.before,
      r.attempts,
    ),
  );
}
