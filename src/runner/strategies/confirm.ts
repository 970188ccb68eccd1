/**
 * Confirms each device of accepted device-state requests (product.md 5a), by the best means the situation
 * allows, in this order:
 * 1. the CarrierService message for the device, correlated by request id, when this process listens for them
 *    (the daemon): the ones already in the inbox, then each as it arrives;
 * 2. the request-status operation (`requests.status`), asked once a poll interval has passed without every
 *    device confirmed (at once without a listener): `Success` confirms every device of the request;
 * 3. the devices' state (a listing filtered on the state the action leaves them in), for a request the service
 *    says `Failure` (or `Failed`) or `PartialSuccess`, or whose status it cannot give: a device in that state
 *    succeeded; once the service says the request is finished, a device not in it failed (`STATE NOT CHANGED`).
 *    A guess, without the service's reason: the ledger marks it so (byStateRead), and the device's message, should
 *    it come after the step (the run ended or still going), supersedes it (store/late.ts).
 * A device still not confirmed when the step's confirmation time has passed (counted from its acceptance, across
 * a restart too) is `unconfirmed`, unless a last look at the devices' state finds it changed. A read that fails
 * for a while (notForNow) is asked again at the next poll; when the last look fails, those left are `unconfirmed`
 * with its error. The step summary counts the devices each means confirmed.
 */
import { STATE_NOT_CHANGED, deviceErrorClass } from '../../api/device-errors.js';
import { ApiError, NetworkError } from '../../errors.js';
import type { Confirmation, DeviceGroup } from '../../store/store.js';
import { Alarm } from '../../rate/alarm.js';
import { errorOf } from '../context.js';
import type { DeviceResults } from '../device-results.js';
import { identifiersOf, setOf, type GroupResult } from '../devices.js';
import type { AcceptedRequest, CarrierResult, Json } from '../types.js';
import type { ActionCall } from './index.js';
import { sendsOf, withSends } from './sends.js';

/**
 * A request with devices still to confirm: every device of the request until the first one is confirmed alone
 * (a callback, a state read), then those left, by id with their kind. A request the service says succeeded is
 * confirmed whole, as one group, without a look at each device.
 */
class Waiting {
  private left?: Map<string, string>;
  count: number;

  constructor(readonly request: AcceptedRequest) {
    this.count = request.devices.reduce((n, [, ids]) => n + ids.length, 0);
  }

  /** Devices still to confirm. */
  ids(): string[] {
    return this.left ? [...this.left.keys()] : this.request.devices.flatMap(([, ids]) => ids);
  }

  /** The kind of `id` when it is still to confirm; it is then confirmed. */
  take(id: string): string | undefined {
    this.left ??= new Map(this.request.devices.flatMap(([kind, ids]) => ids.map((i) => [i, kind] as const)));
    const kind = this.left.get(id);
    if (kind !== undefined) {
      this.left.delete(id);
      this.count--;
    }
    return kind;
  }

  /** The attempts of device `id` (sends.ts): the sends it had before this request's pass, and this request's. */
  attemptsOf(id: string): number {
    return sendsOf(this.request.before, id, this.request.attempts);
  }

  /** Every device still to confirm, as groups with `result` and their attempts; none is left. */
  takeAll(result: Omit<GroupResult, 'attempts'>): DeviceGroup[] {
    const runs = this.left ? [...groupBy(this.left)] : (this.request.devices as [string, string[]][]);
    this.left = new Map();
    this.count = 0;
    return withSends(setOf(runs), result, this.request.before, this.request.attempts);
  }
}

function groupBy(left: Map<string, string>): Map<string, string[]> {
  const byKind = new Map<string, string[]>();
  for (const [id, kind] of left) {
    const ids = byKind.get(kind);
    if (ids) ids.push(id);
    else byKind.set(kind, [id]);
  }
  return byKind;
}

export async function confirmRequests(
  x: ActionCall,
  requests: AcceptedRequest[],
  results: DeviceResults,
  tally: Confirmation,
): Promise<void> {
  const { ctx, plan } = x;
  const waiting = new Map(requests.map((r) => [r.requestId, new Waiting(r)]));
  let left = [...waiting.values()].reduce((n, w) => n + w.count, 0);
  if (!left) return;
  const confirm: Confirm = {
    one(w, id, r, by) {
      const kind = w.take(id);
      if (kind === undefined) return;
      results.addOne({
        deviceId: id,
        kind,
        attempts: w.attemptsOf(id),
        requestId: w.request.requestId,
        ...r,
      });
      tally[by]++;
      left--;
    },
    all(w, r, by) {
      const n = w.count;
      const groups = w.takeAll({ requestId: w.request.requestId, ...r });
      results.add(groups);
      if (by) tally[by] += n;
      left -= n;
    },
  };
  // Rung when the last device is confirmed by callback: the sleep below ends then, not at its poll interval.
  const alarm = new Alarm(ctx.clock);
  let unfollow: (() => void) | undefined;
  const source = ctx.o.confirmations;
  const listening = Boolean(source && requests.every((r) => source.listening(r.accountName)));
  /** The error of the last look at the devices' state, when it failed: why those left are not confirmed. */
  let lastLook: unknown;
  try {
    if (listening) {
      unfollow = source?.follow(
        requests.map((r) => r.requestId),
        (requestId, r: CarrierResult) => {
          const w = waiting.get(requestId);
          if (!w) return;
          for (const k of r.ids) {
            const before = left;
            confirm.one(w, k.slice(k.indexOf(':') + 1), carrierOutcome(r), 'callback');
            if (left !== before) break;
          }
          if (!left) alarm.ring();
        },
      );
    }
    const interval = plan.confirmPollMs ?? ctx.o.pollIntervalMs ?? 5000;
    const deadline = Math.min(...requests.map((r) => r.at)) + plan.confirmMs;
    // With a listener, the service is asked only after a poll interval without every device confirmed.
    let ask = !listening;
    while (left) {
      if (ask) await askService(x, [...waiting.values()], confirm);
      ask = true;
      if (!left) break;
      const remaining = deadline - ctx.clock.now();
      if (remaining <= 0) {
        // A last look at the devices' state: those the service did change are not left unconfirmed.
        lastLook = await settleFromState(x, [...waiting.values()], confirm);
        break;
      }
      await alarm.sleep(Math.min(interval, remaining), x.signal);
    }
  } finally {
    unfollow?.();
  }
  // Confirmed by no means: counted under none, with the error of the last look when it failed.
  const why = lastLook === undefined ? {} : errorOf(lastLook);
  for (const w of waiting.values()) if (w.count) confirm.all(w, { outcome: 'unconfirmed', ...why });
}

type Outcome = Pick<GroupResult, 'outcome' | 'errorType' | 'errorClass' | 'byStateRead'>;

/**
 * A device a read of the devices' state found in the target state. Marked as the read's (byStateRead), as is one
 * the read did not find changed: the service's own message, should it come after the step, supersedes them.
 */
const READ_SUCCEEDED: Outcome = { outcome: 'succeeded', byStateRead: true };

/** A device's outcome as its CarrierService message gives it: the service's reason for a device it did not change. */
export function carrierOutcome(r: CarrierResult): Outcome & { outcome: 'succeeded' | 'failed' } {
  if (r.succeeded) return { outcome: 'succeeded' };
  const type = r.errorType ?? 'FAILED';
  return { outcome: 'failed', errorType: type, errorClass: deviceErrorClass(type) };
}

/** How devices are confirmed: one, or every one left of a request; counted under the means. */
interface Confirm {
  one(w: Waiting, id: string, r: Outcome, by: keyof Confirmation): void;
  all(w: Waiting, r: Outcome, by?: keyof Confirmation): void;
}

/**
 * Request status for each request with devices still to confirm; the devices' state where that is not enough.
 * A read that fails for a while (a lost answer, a 5xx, a 429 the client's retries did not outlast) leaves the
 * devices waiting: they are asked again at the next poll, and left `unconfirmed` at the confirmation time.
 */
async function askService(x: ActionCall, requests: Waiting[], confirm: Confirm): Promise<void> {
  const { ctx, step } = x;
  for (const w of requests) {
    if (!w.count) continue;
    const { request } = w;
    let status: string | undefined;
    try {
      const answer = (await ctx.call(
        x.count,
        'requests.status',
        { accountName: request.accountName, requestId: request.requestId },
        x.signal,
      )) as Json;
      status = typeof answer.status === 'string' ? answer.status : undefined;
    } catch (e) {
      if (!(e instanceof ApiError) || e.retryClass !== 'permanent') {
        if (notForNow(x, e)) continue;
        throw e;
      }
      // A service that cannot tell this request's status: the devices' state still can.
      ctx.log.debug('request status unavailable', {
        step: step.id,
        requestId: request.requestId,
        error: e.message,
      });
    }
    if (status === 'Pending') continue;
    if (status === 'Success') {
      confirm.all(w, { outcome: 'succeeded' }, 'requestStatus');
      continue;
    }
    const finished = status === 'Failure' || status === 'Failed' || status === 'PartialSuccess';
    let applied: Set<string>;
    try {
      applied = await readApplied(x, request.accountName, x.input, new Set(w.ids()));
    } catch (e) {
      if (notForNow(x, e)) continue;
      throw e;
    }
    for (const id of applied) confirm.one(w, id, READ_SUCCEEDED, 'stateRead');
    if (finished && w.count)
      confirm.all(
        w,
        { outcome: 'failed', errorType: STATE_NOT_CHANGED, errorClass: 'permanent', byStateRead: true },
        'stateRead',
      );
  }
}

/**
 * Whether a confirming read's error is one to wait out (the network, or an answer the service may give
 * otherwise later) rather than the step's end: logged, and the read is asked again at the next poll.
 */
function notForNow(x: ActionCall, e: unknown): boolean {
  if (x.signal?.aborted) return false;
  if (!(e instanceof NetworkError) && !(e instanceof ApiError && e.retryClass !== 'permanent')) return false;
  x.ctx.log.warn('a read to confirm devices failed; asked again at the next poll', {
    step: x.step.id,
    error: (e as Error).message,
  });
  return true;
}

/**
 * Devices still to confirm that are in the target state succeeded (one listing per account). Returns the error
 * of a read that failed (notForNow): the devices it was to look at are still to confirm.
 */
async function settleFromState(x: ActionCall, requests: Waiting[], confirm: Confirm): Promise<unknown> {
  const byAccount = new Map<string, Waiting[]>();
  for (const w of requests) {
    if (!w.count) continue;
    const list = byAccount.get(w.request.accountName);
    if (list) list.push(w);
    else byAccount.set(w.request.accountName, [w]);
  }
  let failed: unknown;
  for (const [accountName, list] of byAccount) {
    const ids = new Set(list.flatMap((w) => w.ids()));
    let applied: Set<string>;
    try {
      applied = await readApplied(x, accountName, x.input, ids);
    } catch (e) {
      if (!notForNow(x, e)) throw e;
      failed = e;
      continue;
    }
    for (const w of list)
      for (const id of w.ids()) if (applied.has(id)) confirm.one(w, id, READ_SUCCEEDED, 'stateRead');
  }
  return failed;
}

/**
 * Which of `ids` are in the state the action leaves devices in, read from the account's listing of the devices
 * in that state, no further than the last device looked for.
 */
export async function readApplied(
  x: ActionCall,
  accountName: string,
  input: Json,
  ids: Set<string>,
): Promise<Set<string>> {
  const { op } = x;
  if (!op.applied) return new Set();
  return readListed(x, accountName, op.applied(input), ids);
}

/**
 * Which of `ids` the account has, whatever their state, read from its listing of every device, no further than the
 * last device looked for: one it does not have (a listing names no unknown device, and gives no error for one) is
 * known only at the listing's end.
 */
export function readInAccount(x: ActionCall, accountName: string, ids: Set<string>): Promise<Set<string>> {
  return readListed(x, accountName, {}, ids);
}

/** Which of `ids` the account's listing of the devices `selection` selects has, read no further than the last. */
async function readListed(
  x: ActionCall,
  accountName: string,
  selection: Json,
  ids: Set<string>,
): Promise<Set<string>> {
  const { ctx } = x;
  const found = new Set<string>();
  if (!ids.size) return found;
  for await (const record of ctx.o.client.items(
    'devices.list',
    { accountName, ...selection, maxNumberOfDevices: 2000 },
    ctx.requestsOf(x.count, x.signal),
  )) {
    for (const id of identifiersOf(record as Json)) if (ids.has(id)) found.add(id);
    if (found.size === ids.size) break;
  }
  return found;
}
