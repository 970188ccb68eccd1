/**
 * A session that expires in the middle of a run: the requests that meet the expired-session error share one
 * new login, are replayed, and the run completes with every device changed once.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import {
  accountDevices,
  calls,
  clientFor,
  emulator,
  emulatorClock,
  imei,
  memoryStore,
  playbook,
  setFaults,
} from './helpers.js';

const pb = (pause: string) =>
  playbook(`
version: 1
name: suspend-after-a-pause
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: \${{ inputs.account }}, currentState: active }
  - id: pause
    wait: ${pause}
  - id: batches
    forEach:
      items: \${{ steps.devices.items }}
      batchSize: 5
      concurrency: 4
      steps:
        - id: suspend
          uses: devices.suspend
          with: { accountName: \${{ inputs.account }}, devices: \${{ item }} }
`);

describe('runner: a session that expires mid-run', function () {
  this.timeout(20_000);
  let emu: Emulator;
  let account: string;

  afterEach(() => emu.close());

  /** The devices active before the run; after it, each has exactly one mutation and no other device any. */
  let active: string[];

  async function start(o: { timeScale: number; sessionTtlSeconds: number }): Promise<void> {
    emu = await emulator({ timeScale: o.timeScale });
    account = emu.defaults.accounts[0]!;
    active = (await accountDevices(emu, account)).filter((d) => d.state === 'active').map(imei);
    await setFaults(emu, { sessionTtlSeconds: o.sessionTtlSeconds });
  }

  async function expectEachActiveDeviceSuspendedOnce(): Promise<number> {
    const c = await calls(emu);
    for (const id of Object.keys(c.devices)) expect(c.devices[id], id).to.have.length(1);
    expect(Object.keys(c.devices).sort()).to.deep.equal([...active].sort());
    return c.actions['session.login'] ?? 0;
  }

  it('the simulated clock moved past the idle TTL by a wait step: one new login, shared by concurrent requests', async () => {
    await start({ timeScale: 0, sessionTtlSeconds: 600 });
    const client = clientFor(emu);
    const store = memoryStore();
    try {
      // The runner's clock is the emulator's: the 30-minute wait moves simulated time, with no real wait.
      const summary = await runPlaybook(pb('30m'), {
        client,
        store,
        clock: emulatorClock(emu),
        inputs: { account },
      });
      expect(summary.status, summary.error).to.equal('succeeded');
      expect(summary.devices.failed).to.equal(0);
      expect(summary.devices.succeeded).to.be.greaterThan(20);
      // The first login, then exactly one more after the expiry, although four requests met it at once.
      expect(client.stats.logins).to.equal(2);
      expect(client.stats.sessionRenewals).to.equal(1);
      expect(await expectEachActiveDeviceSuspendedOnce()).to.equal(2);
    } finally {
      await store.close();
      await client.close();
    }
  });

  it('the simulated clock running fast during a real wait: one new login, the run completes', async () => {
    // One real second is an hour of simulated time; the session idles out after 15 simulated minutes (250 ms).
    await start({ timeScale: 3600, sessionTtlSeconds: 900 });
    const client = clientFor(emu);
    const store = memoryStore();
    try {
      const summary = await runPlaybook(pb('1s'), { client, store, inputs: { account } });
      expect(summary.status, summary.error).to.equal('succeeded');
      expect(summary.steps.find((s) => s.id === 'suspend')?.devices.failed).to.equal(0);
      expect(client.stats.logins).to.equal(2);
      expect(await expectEachActiveDeviceSuspendedOnce()).to.equal(2);
    } finally {
      await store.close();
      await client.close();
    }
  });
});
