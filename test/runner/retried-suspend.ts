/**
 * The world of the tests of a device-state step's `devices.retry` passes: one suspend step of an active device and
 * two pending ones, which the service refuses to suspend in every pass (STATE NOT CHANGED), so that each pass
 * sends them again. In process, the real emulator over loopback: the step's first send is lost before it reaches
 * the service (its `retry:` sends it again, so pass 1 has two sends), and the first devices.retry pass's request
 * waits at the carrier for the test's clock. The CLI's tests take the playbook and the devices alone.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { NetworkError } from '../../src/errors.js';
import type { Playbook } from '../../src/playbook/schema.js';
import type { KeptRequest, RunOptions } from '../../src/runner/types.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../helpers/temp.js';
import {
  accountDevices,
  clientFor,
  emulator,
  imei,
  playbook,
  suspendYaml,
  type SeedDevice,
} from './helpers.js';

/**
 * The playbook `retried`: a suspend of `ids` in `account`, its sends retried on a network error (3 at most), its
 * requests confirmed within `confirm` (polled every `pollInterval`), and its devices refused with STATE NOT CHANGED
 * or INVALID DEVICE STATE sent again in up to `passes` passes.
 */
export const retriedSuspendYaml = (
  account: string,
  ids: readonly string[],
  o: { confirm: string; pollInterval: string; passes: number },
): string =>
  suspendYaml(
    'retried',
    account,
    ids,
    `retry: { on: [network], maxAttempts: 3, delay: 10ms }
    confirm: { timeout: ${o.confirm}, pollInterval: ${o.pollInterval} }
    devices:
      retry: [{ on: [STATE NOT CHANGED, INVALID DEVICE STATE], maxAttempts: ${o.passes} }]`,
  );

/** The first active device of `emu`'s first account, and its first `pending` pending ones (sorted), by IMEI. */
export async function activeAndPending(
  emu: Emulator,
  pending: number,
): Promise<{ account: string; active: string; pending: string[]; first: SeedDevice }> {
  const account = emu.defaults.accounts[0]!;
  const devices = await accountDevices(emu, account);
  const first = devices.find((d) => d.state === 'active')!;
  const found = {
    account,
    active: imei(first),
    pending: devices
      .filter((d) => d.state === 'pending')
      .slice(0, pending)
      .map(imei)
      .sort(),
    first,
  };
  expect(found.pending).to.have.length(pending);
  return found;
}

/** What `onRetriedSuspend` gives each test, made afresh before it. */
export interface RetriedSuspend<S extends Store> {
  emu: Emulator;
  /** The client the run uses, its suspends watched (and steered, by the flags below). */
  client: Client;
  /** The store, in a temporary folder of the test's own (`dir`), with the run `r1` of `retried` created, running. */
  store: S;
  dir: string;
  account: string;
  active: string;
  /** Two pending devices, sorted. */
  pending: string[];
  /** The suspends sent for each device, as this client made them (the first one lost on its way). */
  sends: Map<string, number>;
  /** The suspend requests sent, lost or not. */
  requests: number;
  /**
   * Set by a test: pass 2's request is answered, and the run is stopped before the answer is recorded (the
   * request is on its way back when the process stops); `answered` once it was. The first pending device is
   * activated before that request leaves: pass 2 suspends it.
   */
  stopAtPass2: boolean;
  /** Set by a test: as `stopAtPass2`, of pass 1's request as the step's retry sends it again. */
  stopAtPass1: boolean;
  answered: boolean;
  /**
   * Set by a test: the next suspend request is held until the run is stopped, and never leaves (the client refuses
   * a request of a stopped run); `held` once it was.
   */
  holdNext: boolean;
  held: boolean;
  /** The options of a run of `r1` on the world's client and store, and `o`. */
  options(o?: Partial<RunOptions>): RunOptions;
  /** The playbook of the world's devices: `confirm` (20s by default) at a 20ms poll, `passes` (3 by default). */
  pb(o?: { confirm?: string; passes?: number }): Playbook;
  /** The step's checkpoint's requests once it confirms its second (the first devices.retry pass's), else undefined. */
  confirmingPass2(): Promise<KeptRequest[] | undefined>;
  /** Each device's latest entry in the ledger: outcome and attempts. */
  latest(): Promise<Record<string, [string, number]>>;
}

/** Resolves once the run whose signal this is is stopped. */
export function stopOf(signal: AbortSignal | undefined): Promise<unknown> {
  if (!signal) throw new Error('a device-state step calls with the run signal');
  return new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
}

/**
 * The world for each test of the describe block that calls this, on the store `open` makes in a temporary folder:
 * one emulator for the block (200 devices), reset before each test; the client and the store closed after it.
 */
export function onRetriedSuspend<S extends Store>(open: (dir: string) => S | Promise<S>): RetriedSuspend<S> {
  const w = {
    options: (o: Partial<RunOptions> = {}) => ({ client: w.client, store: w.store, runId: 'r1', ...o }),
    pb: ({ confirm = '20s', passes = 3 } = {}) =>
      playbook(
        retriedSuspendYaml(w.account, [w.active, ...w.pending], { confirm, pollInterval: '20ms', passes }),
      ),
    confirmingPass2: async () => {
      const cp = (await w.store.loadSteps('r1')).get('suspend') as
        { status?: string; accepted?: KeptRequest[] } | undefined;
      return cp?.status === 'confirming' && cp.accepted?.length === 2 ? cp.accepted : undefined;
    },
    latest: async () =>
      Object.fromEntries(
        (await w.store.deviceResults('r1', 'suspend')).map((r) => [r.deviceId, [r.outcome, r.attempts]]),
      ),
  } as RetriedSuspend<S>;

  before(async () => {
    w.emu = await emulator({ devicesPerAccount: 200 });
  });
  after(() => w.emu.close());
  beforeEach(async () => {
    const { emu } = w;
    emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 200 });
    const { account, active, pending, first } = await activeAndPending(emu, 2);
    Object.assign(w, { account, active, pending, sends: new Map(), requests: 0 });
    Object.assign(w, {
      stopAtPass2: false,
      stopAtPass1: false,
      answered: false,
      holdNext: false,
      held: false,
    });
    w.dir = tempDir('fleetbook-retried-suspend-');
    w.store = await open(w.dir);
    const client = (w.client = clientFor(emu));
    /** The service plan of the active device: what activating a pending one takes. */
    const plan = String((first as SeedDevice & { servicePlan: string }).servicePlan);
    const call = client.callByName.bind(client);
    const activate = (id: string) =>
      call('devices.activate', { accountName: account, devices: [{ id, kind: 'imei' }], servicePlan: plan });
    client.callByName = async (name, input, opts) => {
      if (name !== 'devices.suspend') return call(name, input, opts);
      if (w.holdNext) {
        w.holdNext = false;
        w.held = true;
        await stopOf(opts?.signal);
        return call(name, input, opts);
      }
      const n = ++w.requests;
      // The step names its devices as the playbook does: `{ id, kind }`.
      for (const { id } of (input as { devices: { id: string }[] }).devices)
        w.sends.set(id, (w.sends.get(id) ?? 0) + 1);
      // The first send is lost before it reaches the service: the step's retry sends it again (pass 1 has 2).
      if (n === 1) throw new NetworkError(name, 'ECONNRESET', false, 'socket hang up');
      if (n === 3 && w.stopAtPass2) await activate(pending[0]!);
      // The first devices.retry pass's request waits at the carrier for the test's clock.
      if (n === 3 && !w.stopAtPass1) emu.setFaults({ processingSeconds: 30 });
      if (!(n === 3 && w.stopAtPass2) && !(n === 2 && w.stopAtPass1)) return call(name, input, opts);
      // The service took the request; its answer is not recorded before the process stops.
      const signal = opts?.signal;
      await call(name, input, opts);
      w.answered = true;
      await stopOf(signal);
      throw signal?.reason;
    };
    w.store.createRun({
      id: 'r1',
      playbook: 'retried',
      status: 'running',
      trigger: { type: 'manual' },
      inputs: {},
      startedAt: new Date().toISOString(),
    });
  });
  afterEach(async () => {
    await w.store.close();
    await w.client.close();
  });
  return w;
}
