/**
 * The reads a device-state action relies on when an answer is lost or its outcome comes later, against the
 * emulator with the client's answers lost on purpose:
 * - A suspend whose answer is lost after the service acted is reconciled by reading the devices' state. Measured
 *   (a full run of the suite, suspend-batches with connection resets): that read, reset too, ended the step with
 *   no ledger row for the batch's 500 devices. The read is now asked again with the step's retries; when it still
 *   fails, the devices are recorded `unconfirmed`, never left out, and never sent again.
 * - The reads that confirm an accepted request (its status, the devices' state) are asked again at the next poll
 *   when they fail, until the step's confirmation time. Measured (suspend-batches with connection resets, about
 *   one full run of the suite in thirty): a `requests.status` reset five times over ended the step with "other
 *   side closed" though the service had accepted the batch, and the summary counted its 500 devices nowhere. A
 *   read that still fails at the confirmation time leaves the devices `unconfirmed` with its error.
 * - A lost answer while the carrier still carries the request out (it acts later, as for an accepted request):
 *   one read of the devices' state found them unchanged, and the request was sent again, so each device was
 *   changed twice (measured: a SIGKILL with two requests pending at the carrier, then a resume, suspended 1,000
 *   devices twice). The state is now watched until the step's confirmation time before anything is sent again.
 *   And an answer lost for good recorded the devices `failed` (confirmed not done) though the service had
 *   suspended them: they are `unconfirmed`.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { NetworkError } from '../../src/errors.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { accountDevices, calls, clientFor, emulator, imei, memoryStore, playbook } from './helpers.js';

const SUSPEND = (ids: string[], more: string) => `
version: 1
name: suspend-three
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: suspend
    uses: devices.suspend
    with:
      accountName: \${{ inputs.account }}
      devices: [${ids.map((id) => `{ id: "${id}", kind: imei }`).join(', ')}]
    ${more}
`;

describe('runner: the reads of a device-state action', function () {
  this.timeout(20_000);
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let account: string;
  let ids: string[];
  /**
   * What is lost: suspend answers (after the service acted), suspends before they reach it (`unsent`, as a
   * request lost on its way), answers of the status, and reads of the state; each a count.
   */
  let lose: { suspend: number; unsent?: number; status: number; reads: number };

  before(async () => {
    emu = await emulator({ devicesPerAccount: 20 });
  });
  after(() => emu.close());
  beforeEach(async () => {
    emu.reset({ devicesPerAccount: 20 });
    await lossy(emu);
  });
  afterEach(async () => {
    await store.close();
    await client.close();
  });

  /** A store, and a client of `on` that loses what `lose` says. */
  async function lossy(on: Emulator): Promise<void> {
    account = on.defaults.accounts[0]!;
    ids = (await accountDevices(on, account))
      .filter((d) => d.state === 'active')
      .slice(0, 3)
      .map(imei);
    store = memoryStore();
    client = clientFor(on);
    const lost = (name: string) => new NetworkError(name, 'ECONNRESET', true, 'socket hang up');
    const call = client.callByName.bind(client);
    client.callByName = async (name, input, opts) => {
      if (name === 'devices.suspend' && (lose.unsent ?? 0) > 0 && lose.unsent!-- > 0) throw lost(name);
      const out = await call(name, input, opts);
      if (name === 'devices.suspend' && lose.suspend-- > 0) throw lost(name);
      if (name === 'requests.status' && lose.status-- > 0) throw lost(name);
      return out;
    };
    const items = client.items.bind(client);
    client.items = ((name: string, input: Record<string, unknown>, opts?: object) => {
      if (name === 'devices.list' && lose.reads-- > 0)
        // eslint-disable-next-line require-yield
        return (async function* () {
          throw lost(name);
        })();
      return items(name as never, input as never, opts as never);
    }) as typeof client.items;
  }

  const run = (more: string) =>
    runPlaybook(playbook(SUSPEND(ids, more)), { client, store, inputs: { account } });
  const outcomes = async (runId: string) =>
    (await store.deviceResults(runId, 'suspend')).map((r) => [r.outcome, r.errorType]);
  const suspends = async () => (await calls(emu)).actions['devices.suspend'];

  describe('reconciling a lost answer', () => {
    const RETRY = 'retry: { on: [network], maxAttempts: 4, delay: 10ms }';

    it('reset twice, the read is asked again: the devices the service suspended succeed, sent once', async () => {
      lose = { suspend: Infinity, status: 0, reads: 2 };
      const s = await run(RETRY);
      expect(s.status, s.error).to.equal('succeeded');
      expect(await outcomes(s.runId)).to.deep.equal(ids.map(() => ['succeeded', undefined]));
      expect(await suspends()).to.equal(1);
    });

    it('reset every time, the devices are recorded unconfirmed with the error, not left out nor sent again', async () => {
      lose = { suspend: Infinity, status: 0, reads: Infinity };
      const s = await run(RETRY);
      expect(s.status).to.equal('failed');
      expect(s.error).to.match(/devices\.list: socket hang up/);
      expect(await outcomes(s.runId)).to.deep.equal(ids.map(() => ['unconfirmed', 'OUTCOME UNKNOWN']));
      expect(s.steps[0]?.devices.unconfirmed).to.equal(3);
      expect(await suspends()).to.equal(1);
    });
  });

  describe('confirming an accepted request', () => {
    const CONFIRM = 'confirm: { timeout: 1s, pollInterval: 20ms }';

    it('a status lost twice is asked again at the next poll: the devices succeed, sent once', async () => {
      lose = { suspend: 0, status: 2, reads: 0 };
      const s = await run(CONFIRM);
      expect(s.status, s.error).to.equal('succeeded');
      expect(await outcomes(s.runId)).to.deep.equal(ids.map(() => ['succeeded', undefined]));
      expect(s.steps[0]?.confirmation).to.deep.equal({ callback: 0, requestStatus: 3, stateRead: 0 });
      expect(await suspends()).to.equal(1);
    });

    it('a status and a state read lost every time: unconfirmed with the error at the confirmation time', async () => {
      lose = { suspend: 0, status: Infinity, reads: Infinity };
      const s = await run(CONFIRM);
      // The devices' outcome is in the ledger; with no `devices.toleratedFailurePercent`, the step goes on.
      expect(s.status, s.error).to.equal('succeeded');
      expect(await outcomes(s.runId)).to.deep.equal(ids.map(() => ['unconfirmed', 'OUTCOME UNKNOWN']));
      expect(s.steps[0]?.devices).to.include({ total: 3, unconfirmed: 3, accepted: 0 });
      expect(s.steps[0]?.devices.byError).to.deep.equal({ 'OUTCOME UNKNOWN': 3 });
      expect(s.devices).to.include({ total: 3, unconfirmed: 3 });
      expect(await suspends()).to.equal(1);
    });
  });

  describe('an unknown outcome while the carrier still works', () => {
    /** A carrier that takes 30 simulated seconds to act: half a real second at 60 simulated seconds to one. */
    let slow: Emulator;
    const WATCH = 'confirm: { timeout: 1m, pollInterval: 50ms }';
    const mutations = async () => {
      const done = (await calls(slow)).devices;
      return ids.map((id) => done[id]?.length ?? 0);
    };

    before(async () => {
      slow = await emulator({ devicesPerAccount: 20, timeScale: 60 });
    });
    after(() => slow.close());
    beforeEach(async () => {
      await store.close();
      await client.close();
      slow.reset({ devicesPerAccount: 20 });
      slow.setFaults({ processingSeconds: 30 });
      await lossy(slow);
    });

    it('a lost answer is watched while the carrier acts: the devices succeed, each changed once', async () => {
      lose = { suspend: 1, status: 0, reads: 0 };
      const s = await run(`retry: { on: [network], maxAttempts: 4, delay: 10ms }\n    ${WATCH}`);
      expect(s.status, s.error).to.equal('succeeded');
      expect(await outcomes(s.runId)).to.deep.equal(ids.map(() => ['succeeded', undefined]));
      expect(s.steps[0]?.confirmation).to.deep.equal({ callback: 0, requestStatus: 0, stateRead: 3 });
      expect(await mutations()).to.deep.equal([1, 1, 1]);
      expect((await calls(slow)).actions['devices.suspend']).to.equal(1);
    });

    it('a request lost on its way is sent again once the confirmation time has passed', async () => {
      lose = { suspend: 0, unsent: 1, status: 0, reads: 0 };
      const s = await run(
        'retry: { on: [network], maxAttempts: 4, delay: 10ms }\n    confirm: { timeout: 2s, pollInterval: 100ms }',
      );
      expect(s.status, s.error).to.equal('succeeded');
      expect(await outcomes(s.runId)).to.deep.equal(ids.map(() => ['succeeded', undefined]));
      expect(await mutations()).to.deep.equal([1, 1, 1]);
    });

    it('an answer lost for good leaves the devices unconfirmed, not failed', async () => {
      // The carrier never finishes: each request stays pending, and every answer is lost.
      slow.setFaults({ processingSeconds: 30, neverFinishDevices: [...ids] });
      lose = { suspend: Infinity, status: 0, reads: 0 };
      const s = await run(
        'retry: { on: [network], maxAttempts: 2, delay: 10ms }\n    confirm: { timeout: 300ms, pollInterval: 50ms }',
      );
      expect(s.status).to.equal('failed');
      expect(await outcomes(s.runId)).to.deep.equal(ids.map(() => ['unconfirmed', 'OUTCOME UNKNOWN']));
      expect(s.steps[0]?.devices).to.include({ total: 3, unconfirmed: 3, failed: 0 });
    });
  });
});
