/**
 * A plain call that names devices (an SMS to devices) and fails, on the real emulator over loopback, on SQLite and
 * PostgreSQL. The ledger names every device a request was sent for, whatever its end.
 *
 * Before, the call strategy recorded its devices only when the call succeeded (or answered without a request id):
 * an answer lost once the request may have reached the service (a reset, a 5xx), a definite refusal (a 4xx), a
 * cancel while the request was on its way, and a run resumed after a stop while it was on its way all left the
 * devices out of the ledger, as if nothing had been sent for them. Now an answer lost, or a cancel once the request
 * may have left, leaves them `unconfirmed` (`OUTCOME UNKNOWN`, or the 5xx's own type): the SMS may have gone; a
 * refusal leaves them `failed` with its type and class; a request that never left records nothing; a stop records
 * nothing, and the resumed run, which does not send the SMS again, records them `unconfirmed` (`OUTCOME UNKNOWN`).
 * Their attempts are the sends made.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import { devicePage, latestOf } from '../../src/store/device-table.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { RunOptions } from '../../src/runner/types.js';
import { openPostgresStore } from '../../src/store/postgres/store.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { RunSummary, Store } from '../../src/store/store.js';
import { emulatorEnv, fleetbook } from '../helpers/cli.js';
import { postgresUrl } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import {
  accountDevices,
  actionCounts,
  clientFor,
  emulator,
  imei,
  interruptedRun,
  onRequestRead,
  playbook,
  setFaults,
  stepOf,
} from './helpers.js';

const STORES: { name: string; open: (file: string) => Promise<Store>; file?: true }[] = [
  { name: 'SQLite', open: async (file) => new SqliteStore(file), file: true },
  { name: 'PostgreSQL', open: async () => openPostgresStore(await postgresUrl()) },
];

const SMS_PATH = '/m2m/v1/sms';
/** How long the emulator holds each request before it acts and answers: a cancel or a stop lands within it. */
const LATENCY_MS = 1500;

/** A playbook of one step, `text`: an SMS to `ids` (IMEIs) of `account`; `extra`, more of the step's lines. */
const SMS = (account: string, ids: readonly string[], extra = '') => `
version: 1
name: plain-call-lost
on: { manual: true }
steps:
  - id: text
    uses: sms.send
    with:
      accountName: "${account}"
      deviceIds: [${ids.map((id) => `{ id: "${id}", kind: imei }`).join(', ')}]
      smsMessage: hello
    ${extra}
`;

for (const kind of STORES) {
  describe(`runner: a plain call's devices when the call fails (${kind.name})`, function () {
    this.timeout(60_000);
    let emu: Emulator;
    let account: string;
    let store: Store;
    let file: string;
    let client: Client;
    let devices: string[];

    before(async () => {
      emu = await emulator({ devicesPerAccount: 20 });
    });
    after(() => emu.close());
    beforeEach(async () => {
      emu.reset({ seed: 1, accounts: 1, devicesPerAccount: 20 });
      account = emu.defaults.accounts[0]!;
      devices = (await accountDevices(emu, account)).slice(0, 3).map(imei).sort();
      file = join(tempDir('plain-call-lost-'), 'state.db');
      store = await kind.open(file);
      client = clientFor(emu);
      // Logged in before the faults: only the step's own requests meet them.
      await client.callByName('devices.list', { accountName: account, maxNumberOfDevices: 1 });
    });
    afterEach(async () => {
      await setFaults(emu, {});
      await client.close();
      await store.close();
    });

    const run = (yaml: string, o: Partial<RunOptions> = {}): Promise<RunSummary> =>
      runPlaybook(playbook(yaml), { client, store, ...o });

    /** The step's ledger rows: device, outcome, error type, error class, attempts. */
    const rows = async (runId: string) =>
      (await store.deviceResults(runId, 'text'))
        .map((r) => [r.deviceId, r.outcome, r.errorType ?? null, r.errorClass ?? null, r.attempts])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0])));

    const sent = async () => (await actionCounts(emu))['sms.send'] ?? 0;

    /** The step's, the run's and the stored summary's device counts all include `counts`. */
    async function counted(s: RunSummary, counts: Record<string, unknown>): Promise<void> {
      expect(stepOf(s, 'text').devices).to.deep.include(counts);
      expect(s.devices).to.deep.include(counts);
      expect((await store.getRun(s.runId))?.summary?.devices).to.deep.include(counts);
    }

    it('its answer lost once the request was written: its devices are unconfirmed (OUTCOME UNKNOWN)', async () => {
      await setFaults(emu, { resetNext: { 'sms.send': 1 } });
      const s = await run(SMS(account, devices));
      expect([s.status, stepOf(s, 'text').status]).to.deep.equal(['failed', 'failed']);
      expect(await sent(), 'SMS the service took').to.equal(1);
      expect(await rows(s.runId)).to.deep.equal(
        devices.map((id) => [id, 'unconfirmed', 'OUTCOME UNKNOWN', 'retryable', 1]),
      );
      await counted(s, { total: 3, failed: 0, unconfirmed: 3, byError: { 'OUTCOME UNKNOWN': 3 } });
      // The console's device table lists them, filtered by their outcome.
      const page = await devicePage(
        store,
        s.runId,
        latestOf(store, s.runId, true),
        { outcome: 'unconfirmed' },
        undefined,
        50,
      );
      expect(page.rows.map((r) => [r.step, r.deviceId, r.outcome, r.errorType])).to.deep.equal(
        devices.map((id) => ['text', id, 'unconfirmed', 'OUTCOME UNKNOWN']),
      );
      if (!kind.file) return;
      // `runs show --devices` lists them, from the state file.
      const shown = await fleetbook(['runs', 'show', s.runId, '--devices', '--json'], {
        ...emulatorEnv(emu),
        FLEETBOOK_STATE: file,
      });
      expect(shown.code, shown.stderr).to.equal(0);
      const listed = (
        JSON.parse(shown.stdout) as {
          deviceResults: { step: string; deviceId: string; outcome: string; errorType?: string }[];
        }
      ).deviceResults;
      expect(
        listed
          .map((r) => [r.step, r.deviceId, r.outcome, r.errorType])
          .sort((a, b) => a[1]!.localeCompare(b[1]!)),
      ).to.deep.equal(devices.map((id) => ['text', id, 'unconfirmed', 'OUTCOME UNKNOWN']));
    });

    it("answered 500: its devices are unconfirmed with the service's error type", async () => {
      await setFaults(emu, { errorRate: 1 });
      const s = await run(SMS(account, devices));
      expect(s.status).to.equal('failed');
      const got = await rows(s.runId);
      expect(got.map((r) => [r[0], r[1], r[2], r[4]])).to.deep.equal(
        devices.map((id) => [id, 'unconfirmed', 'INTERNAL_ERROR', 1]),
      );
      await counted(s, { total: 3, failed: 0, unconfirmed: 3, byError: { INTERNAL_ERROR: 3 } });
    });

    it('refused (a 4xx, sent twice by its retry): its devices are failed, with 2 attempts', async () => {
      // No device of the account: the service refuses the request (400), and has sent nothing.
      const strangers = ['990000000000001', '990000000000002'];
      const s = await run(SMS(account, strangers, 'retry: { on: [http.4xx], maxAttempts: 2, delay: 1ms }'));
      expect(s.status).to.equal('failed');
      expect(stepOf(s, 'text').error).to.match(/HTTP 400/);
      expect(await sent(), 'SMS requests the service saw').to.equal(2);
      const got = await rows(s.runId);
      expect(got.map((r) => [r[0], r[1], r[2], r[4]])).to.deep.equal(
        strangers.map((id) => [id, 'failed', 'INVALID_PARAMETER', 2]),
      );
      expect(got.map((r) => r[3])).to.deep.equal(['permanent', 'permanent']);
      await counted(s, { total: 2, failed: 2, unconfirmed: 0, byError: { INVALID_PARAMETER: 2 } });
    });

    it('cancelled once the service has read the request: its devices are unconfirmed', async () => {
      await setFaults(emu, { latencyMs: LATENCY_MS });
      const cancel = new AbortController();
      const read = onRequestRead(emu, SMS_PATH, 1, () =>
        cancel.abort(new Error('cancelled from the console')),
      );
      const s = await run(SMS(account, devices), { signal: cancel.signal });
      await read;
      expect([s.status, stepOf(s, 'text').status]).to.deep.equal(['cancelled', 'cancelled']);
      expect(await rows(s.runId)).to.deep.equal(
        devices.map((id) => [id, 'unconfirmed', 'OUTCOME UNKNOWN', 'retryable', 1]),
      );
      await counted(s, { total: 3, unconfirmed: 3, byError: { 'OUTCOME UNKNOWN': 3 } });
    });

    it('cancelled before its request reached the client: nothing sent, nothing recorded', async () => {
      // The cancel lands as the `sending` checkpoint is written, before the request leaves the runner.
      const cancel = new AbortController();
      const save = store.saveStep.bind(store);
      store.saveStep = (runId, key, state, with_) => {
        save(runId, key, state, with_);
        if ((state as { status?: string }).status === 'sending') cancel.abort(new Error('cancelled'));
      };
      const s = await run(SMS(account, devices), { signal: cancel.signal });
      expect([s.status, stepOf(s, 'text').status]).to.deep.equal(['cancelled', 'cancelled']);
      expect(await sent(), 'SMS requests the service saw').to.equal(0);
      expect(await rows(s.runId)).to.deep.equal([]);
    });

    it('stopped while its request was on its way: the resumed run records its devices unconfirmed', async () => {
      await setFaults(emu, { latencyMs: LATENCY_MS });
      let reached = false;
      const read = onRequestRead(emu, SMS_PATH, 1, () => (reached = true));
      const pb = playbook(SMS(account, devices));
      await interruptedRun(pb, { client, store, runId: 'stopped-sms' }, () => reached);
      await read;
      // A stop records nothing: the resumed run decides.
      expect(await rows('stopped-sms')).to.deep.equal([]);
      await setFaults(emu, {});
      const s = await run(SMS(account, devices), { runId: 'stopped-sms' });
      expect(s.status).to.equal('failed');
      expect(stepOf(s, 'text').error).to.match(/outcome is unknown, so it is not sent again/);
      // The emulator took the first request (it acts after its latency, whoever listens); the SMS is not sent again.
      for (let i = 0; i < 300 && (await sent()) === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(await sent(), 'SMS the service took').to.equal(1);
      expect(await rows(s.runId)).to.deep.equal(
        devices.map((id) => [id, 'unconfirmed', 'OUTCOME UNKNOWN', 'retryable', 1]),
      );
      await counted(s, { total: 3, unconfirmed: 3, byError: { 'OUTCOME UNKNOWN': 3 } });
    });

    it('a retry-safe call stopped on its way is sent again when resumed: 2 attempts, the sends made', async () => {
      const exclusions = (extra = '') => `
version: 1
name: plain-call-lost-exclusions
on: { manual: true }
steps:
  - id: text
    uses: location.setExclusions
    with: { accountName: "${account}", type: append, allDevice: false, exclusion: [${devices.map((id) => `"${id}"`).join(', ')}] }
    ${extra}
`;
      await setFaults(emu, { latencyMs: LATENCY_MS });
      let reached = false;
      const read = onRequestRead(emu, '/loc/v1/consents', 1, () => (reached = true));
      await interruptedRun(
        playbook(exclusions()),
        { client, store, runId: 'stopped-exclusions' },
        () => reached,
      );
      await read;
      expect(await rows('stopped-exclusions')).to.deep.equal([]);
      await setFaults(emu, {});
      const s = await run(exclusions(), { runId: 'stopped-exclusions' });
      expect(s.status, s.error).to.equal('succeeded');
      // The one before the stop, and the resumed run's.
      expect(await rows(s.runId)).to.deep.equal(devices.map((id) => [id, 'succeeded', null, null, 2]));
    });
  });
}
