/**
 * The real emulator behind a proxy that rewrites its answers (test/helpers/rewriting-proxy.ts), and a client of
 * the proxy, for the tests of what the runner does with an answer the emulator would not give (a request id
 * missing, a NUL in a field): set up before a describe block's tests; each test has three active devices of the
 * first account, its own client and store, and no rewriting until it sets `rewrite`.
 */
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { RunOptions } from '../../src/runner/types.js';
import type { RunSummary, Store } from '../../src/store/store.js';
import { startRewritingProxy, type Rewrite, type RewritingProxy } from '../helpers/rewriting-proxy.js';
import { accountDevices, emulator, emulatorClock, imei, playbook, RATES } from './helpers.js';

export interface Proxied {
  emu: Emulator;
  proxy: RewritingProxy;
  client: Client;
  store: Store;
  account: string;
  /** Three active devices of the account, by IMEI. */
  active: string[];
  /** How the proxy rewrites the emulator's answers: `undefined` leaves one as it is. */
  rewrite: Rewrite;
  /** Runs the playbook `yaml` with this test's client and store, on the emulator's clock, and `o`. */
  run(yaml: string, o?: Partial<RunOptions>): Promise<RunSummary>;
  /**
   * Runs a playbook of one step, `it`, whose members are `lines` (each indented four spaces), with the input
   * `account` declared and given the account's name; as `run` otherwise.
   */
  runStep(lines: string, o?: Partial<RunOptions>): Promise<RunSummary>;
  /**
   * Each device's id, outcome, error type and request id in the run's ledger, of whichever step the playbook
   * names: the tests' playbooks have one step that names devices.
   */
  ledger(runId: string): Promise<unknown[][]>;
}

export function behindRewritingProxy(openStore: () => Store | Promise<Store>): Proxied {
  const t = {
    rewrite: () => undefined,
    run: (yaml: string, o: Partial<RunOptions> = {}) =>
      runPlaybook(playbook(yaml), { client: t.client, store: t.store, clock: emulatorClock(t.emu), ...o }),
    runStep: (lines: string, o: Partial<RunOptions> = {}) =>
      t.run(
        `
version: 1
name: one-step
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: it
${lines}
`,
        { inputs: { account: t.account }, ...o },
      ),
    ledger: async (runId: string) => {
      const rows = await t.store.deviceResults(runId);
      expect(new Set(rows.map((r) => r.step)).size, 'steps with entries in the ledger').to.be.at.most(1);
      return rows.map((r) => [r.deviceId, r.outcome, r.errorType, r.requestId]);
    },
  } as unknown as Proxied;
  before(async () => {
    t.emu = await emulator({ devicesPerAccount: 20 });
    t.proxy = await startRewritingProxy(t.emu.url, (...a) => t.rewrite(...a));
  });
  after(async () => {
    await t.proxy.close();
    await t.emu.close();
  });
  beforeEach(async () => {
    t.emu.reset({ devicesPerAccount: 20 });
    t.account = t.emu.defaults.accounts[0]!;
    t.active = (await accountDevices(t.emu, t.account))
      .filter((d) => d.state === 'active')
      .slice(0, 3)
      .map(imei);
    t.client = createClient({
      baseUrl: `${t.proxy.url}/api`,
      clientId: t.emu.defaults.clientId,
      clientSecret: t.emu.defaults.clientSecret,
      username: t.emu.defaults.username,
      password: t.emu.defaults.password,
      rates: RATES,
    });
    t.store = await openStore();
    t.rewrite = () => undefined;
  });
  afterEach(() => t.client.close());
  return t;
}
