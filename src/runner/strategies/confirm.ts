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
 * A device still not confirmed when the step's confirmation time has passed (counted from its acceptance, across
 * a restart too) is `unconfirmed`, unless a last look at the devices' state finds it changed. The step summary counts the devices each means confirmed.
 */
import { STATE_NOT_CHANGED, deviceErrorClass } from '../../api/device-errors.js';
import { ApiError } from '../../errors.js';
import type { Confirmation, DeviceResult } from '../../store/store.js';
import { identifiersOf } from '../devices.js';
import type { AcceptedRequest, CarrierResult, Json } from '../types.js';
import type { ActionCall } from './index.js';

const CONFIRMED = new Error('the devices are confirmed');

interface Pending {
  request: AcceptedRequest;
  kind: string;
}

export async function confirmRequests(
  x: ActionCall,
  requests: AcceptedRequest[],
  results: Map<string, DeviceResult>,
  tally: Confirmation,
): Promise<void> {
  const { ctx, plan } = x;
  const pending = new Map<string, Pending>();
  for (const request of requests)
    for (const [kind, ids] of request.devices) for (const id of ids) pending.set(id, { request, kind });
  if (!pending.size) return;
  const settle: Settle = (id, r, by) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    results.set(id, {
      deviceId: id,
      kind: p.kind,
      attempts: p.request.attempts,
      requestId: p.request.requestId,
      ...r,
    });
    if (by) tally[by]++;
  };
  const stop = new AbortController();
  const signal = AbortSignal.any([x.signal, stop.signal]);
  let wake: (() => void) | undefined;
  const source = ctx.o.confirmations;
  const listening = Boolean(source && requests.every((r) => source.listening(r.accountName)));
  try {
    if (listening) {
      source?.follow(
        requests.map((r) => r.requestId),
        (_requestId, r: CarrierResult) => {
          const id = r.ids.map((k) => k.slice(k.indexOf(':') + 1)).find((i) => pending.has(i));
          if (id === undefined) return;
          settle(
            id,
            r.succeeded
              ? { outcome: 'succeeded' }
              : {
                  outcome: 'failed',
                  errorType: r.errorType ?? 'FAILED',
                  errorClass: deviceErrorClass(r.errorType ?? 'FAILED'),
                },
            'callback',
          );
          if (!pending.size) wake?.();
        },
        signal,
      );
    }
    const interval = plan.confirmPollMs ?? ctx.o.pollIntervalMs ?? 5000;
    const deadline = Math.min(...requests.map((r) => r.at)) + plan.confirmMs;
    // With a listener, the service is asked only after a poll interval without every device confirmed.
    let ask = !listening;
    while (pending.size) {
      if (ask)
        await askService(x, [...new Set([...pending.values()].map((p) => p.request))], pending, settle);
      ask = true;
      if (!pending.size) break;
      const left = deadline - ctx.clock.now();
      if (left <= 0) {
        // A last look at the devices' state: those the service did change are not left unconfirmed.
        await settleFromState(x, pending, settle);
        break;
      }
      await new Promise<void>((resolve, reject) => {
        wake = resolve;
        ctx.clock.sleep(Math.min(interval, left), signal).then(resolve, reject);
      });
      wake = undefined;
    }
  } finally {
    // Ends the following and the sleep; with a reason made once (a DOMException for each would be costly).
    stop.abort(CONFIRMED);
  }
  // Confirmed by no means: counted under none.
  for (const id of [...pending.keys()]) settle(id, { outcome: 'unconfirmed' });
}

type Settle = (
  id: string,
  r: Omit<DeviceResult, 'deviceId' | 'kind' | 'attempts' | 'requestId'>,
  by?: keyof Confirmation,
) => void;

/** Request status for each request with devices still pending; the devices' state where that is not enough. */
async function askService(
  x: ActionCall,
  requests: AcceptedRequest[],
  pending: Map<string, Pending>,
  settle: Settle,
): Promise<void> {
  const { ctx, step } = x;
  for (const request of requests) {
    const ids = [...pending].filter(([, p]) => p.request === request).map(([id]) => id);
    if (!ids.length) continue;
    let status: string | undefined;
    try {
      const answer = (await ctx.call(
        step.id,
        'requests.status',
        { accountName: request.accountName, requestId: request.requestId },
        x.signal,
      )) as Json;
      status = typeof answer.status === 'string' ? answer.status : undefined;
    } catch (e) {
      // A service that cannot tell this request's status: the devices' state still can.
      if (!(e instanceof ApiError) || e.retryClass !== 'permanent') throw e;
      ctx.log.debug('request status unavailable', {
        step: step.id,
        requestId: request.requestId,
        error: e.message,
      });
    }
    if (status === 'Pending') continue;
    if (status === 'Success') {
      for (const id of ids) settle(id, { outcome: 'succeeded' }, 'requestStatus');
      continue;
    }
    const finished = status === 'Failure' || status === 'Failed' || status === 'PartialSuccess';
    const applied = await readApplied(x, request.accountName, x.input, new Set(ids));
    for (const id of ids) {
      if (applied.has(id)) settle(id, { outcome: 'succeeded' }, 'stateRead');
      else if (finished)
        settle(id, { outcome: 'failed', errorType: STATE_NOT_CHANGED, errorClass: 'permanent' }, 'stateRead');
    }
  }
}

/** Devices still pending that are in the target state succeeded (one listing per account). */
async function settleFromState(x: ActionCall, pending: Map<string, Pending>, settle: Settle): Promise<void> {
  const byAccount = new Map<string, string[]>();
  for (const [id, p] of pending)
    byAccount.set(p.request.accountName, [...(byAccount.get(p.request.accountName) ?? []), id]);
  for (const [accountName, ids] of byAccount) {
    const applied = await readApplied(x, accountName, x.input, new Set(ids));
    for (const id of applied) settle(id, { outcome: 'succeeded' }, 'stateRead');
  }
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
  const { ctx, step, op } = x;
  const applied = new Set<string>();
  if (!op.applied || !ids.size) return applied;
  ctx.stepSummary(step.id).calls++;
  for await (const record of ctx.o.client.items(
    'devices.list',
    { accountName, ...op.applied(input), maxNumberOfDevices: 2000 },
    { signal: x.signal },
  )) {
    for (const id of identifiersOf(record as Json)) if (ids.has(id)) applied.add(id);
    if (applied.size === ids.size) break;
  }
  return applied;
}
