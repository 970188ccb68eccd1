/**
 * A dry run started over the daemon's HTTP API: `POST /playbooks/{name}/runs` with `"dryRun": true` stores the
 * run as a dry run and runs it as one: the listing is made, the suspend only planned. Before, the body's
 * `dryRun` was refused as an unknown field, and the one safe way to see what a playbook would do on the live
 * fleet needed a shell on the machine. A `dryRun` that is no boolean is refused (400), and no run stored: read
 * as false, `"dryRun": "yes"` would act on the fleet. A real `fleetbook serve` (the built binary, dist/ must be
 * built) on an emulator of this process, over loopback.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { CATALOG } from '../../src/api/catalog.js';
import type { Emulator } from '../../src/emulator/index.js';
import type { RunSummary } from '../../src/store/store.js';
import { until } from '../helpers/browser.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess, runsIn } from '../helpers/daemon.js';
import { accountDevices, calls, emulator, setFaults } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'dry-run-started');
const PLAYBOOK = 'suspend-active';
const TOKEN = 'dry-run-over-http-daemon-token-0';
const MUTATING = Object.entries(CATALOG)
  .filter(([, op]) => op.mutating)
  .map(([name]) => name);

type Json = Record<string, unknown>;

describe('daemon: a dry run started by POST /playbooks/{name}/runs (child process)', function () {
  this.timeout(90_000);
  let emu: Emulator;
  let tmp: string;
  let state: string;
  let daemon: DaemonProcess;
  let account: string;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 5 });
    account = emu.defaults.accounts[0]!;
    tmp = tempDir('fleetbook-dry-run-over-http-');
    state = join(tmp, 'state.db');
    daemon = await DaemonProcess.start('dry-run-over-http daemon', {
      playbooks: FIXTURES,
      state,
      env: {
        ...emulatorEnv(emu),
        FLEETBOOK_DAEMON_TOKEN: TOKEN,
        FLEETBOOK_CALLBACK_USERNAME: 'dry-http-listener',
        FLEETBOOK_CALLBACK_PASSWORD: 'dry-http-listener-password',
      },
    });
  });
  after(async () => {
    await daemon?.kill();
    await emu?.close();
  });

  async function start(body: unknown): Promise<[number, Json]> {
    const res = await fetch(`${daemon.url}/playbooks/${PLAYBOOK}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return [res.status, (await res.json()) as Json];
  }

  const get = <T>(path: string) => daemon.getJson<T>(path);

  /** The summary of run `runId` once it has ended. */
  const ended = (runId: string) =>
    until(`run ${runId} ended`, async (seen) => {
      const s = await get<RunSummary>(`/runs/${runId}`);
      seen(s.status);
      return s.status === 'queued' || s.status === 'running' ? undefined : s;
    });

  /** The mutating calls the emulator saw, by action, none left out. */
  async function mutatingCalls(): Promise<Record<string, number>> {
    const c = await calls(emu);
    return Object.fromEntries(MUTATING.map((a) => [a, c.actions[a] ?? 0]));
  }
  const none = () => Object.fromEntries(MUTATING.map((a) => [a, 0]));

  it('refuses a dryRun that is no boolean, 400, and stores no run', async () => {
    for (const dryRun of ['yes', 'true', 1, 0, null, {}, []])
      expect(await start({ inputs: { account }, dryRun }), `dryRun ${JSON.stringify(dryRun)}`).to.deep.equal([
        400,
        { error: `dryRun must be true or false (a JSON boolean), not ${JSON.stringify(dryRun)}` },
      ]);
    expect(await start({ inputs: { account }, dry: true })).to.deep.equal([
      400,
      { error: 'unknown field "dry" in the body: it takes "inputs" and "dryRun"' },
    ]);
    expect(runsIn(state, PLAYBOOK), 'runs stored by refused requests').to.deep.equal([]);
    expect(await mutatingCalls()).to.deep.equal(none());
  });

  it('runs a dry run: the listing made, the suspend planned and never sent', async () => {
    const active = (await accountDevices(emu, account)).filter((d) => d.state === 'active').length;
    expect(active, 'active devices in the account').to.be.greaterThan(0);
    const listed = (await calls(emu)).actions['devices.list'] ?? 0;

    // Every call answers slowly: the run is read while in progress, a dry run already.
    await setFaults(emu, { latencyMs: 3000 });
    const [status, answer] = await start({ inputs: { account }, dryRun: true });
    expect([status, answer.status], JSON.stringify(answer)).to.deep.equal([202, 'queued']);
    const runId = answer.runId as string;
    const running = await until(`run ${runId} running`, async (seen) => {
      const s = await get<Json>(`/runs/${runId}`);
      seen(String(s.status));
      return s.status === 'running' ? s : undefined;
    });
    await setFaults(emu, { latencyMs: 0 });
    expect(running.dryRun, 'GET /runs/{id} of the dry run in progress').to.equal(true);
    const summary = await ended(runId);
    expect(await mutatingCalls(), 'the mutating calls the emulator saw').to.deep.equal(none());
    expect((await calls(emu)).actions['devices.list'] ?? 0, 'listings made').to.be.greaterThan(listed);
    expect([summary.status, summary.dryRun], summary.error).to.deep.equal(['succeeded', true]);
    expect(summary.planned).to.deep.equal([
      { step: 'suspend', action: 'devices.suspend', calls: 1, devices: active },
    ]);
    expect(summary.steps.map((s) => [s.id, s.status])).to.deep.equal([
      ['active', 'succeeded'],
      ['suspend', 'planned'],
    ]);
    const [row] = await get<Json[]>(`/runs?playbook=${PLAYBOOK}`);
    expect([row?.id, row?.dryRun, (row?.trigger as Json).type]).to.deep.equal([runId, true, 'manual']);
  });

  it('runs a real run for dryRun false, as for none: the suspend sent', async () => {
    const [status, answer] = await start({ inputs: { account }, dryRun: false });
    expect(status, JSON.stringify(answer)).to.equal(202);
    const summary = await ended(answer.runId as string);
    expect([summary.status, summary.dryRun, summary.planned], summary.error).to.deep.equal([
      'succeeded',
      undefined,
      undefined,
    ]);
    expect((await mutatingCalls())['devices.suspend'], 'suspends sent').to.equal(1);
  });
});
