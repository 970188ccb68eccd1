/**
 * The daemon's run history (docs/daemon.md): `GET /runs/{id}` of a run that failed early gives every step of its
 * playbook's version, those it never reached `unreached`, as `runs show --json` does; and `GET /runs` gives each
 * run in the shape `fleetbook runs list --json` gives it, the event that started it and its device counts both
 * (before, the one left the event out and the other the counts). A real `fleetbook serve` (dist/ must be built),
 * on an emulator over loopback, read by the built CLI on the same state file.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import type { RunSummary } from '../../src/store/store.js';
import { until } from '../helpers/browser.js';
import { emulatorEnv, fleetbook } from '../helpers/cli.js';
import { DaemonProcess } from '../helpers/daemon.js';
import { emulator } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'unreached-steps');
const TOKEN = 'run-history-daemon-token';
const LISTENER = { username: 'run-history-listener', password: 'run-history-listener-password' };

type Json = Record<string, unknown>;

describe('daemon: the run history of GET /runs and GET /runs/{id} (child process)', function () {
  this.timeout(90_000);
  let emu: Emulator;
  let tmp: string;
  let state: string;
  let daemon: DaemonProcess;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 5 });
    tmp = tempDir('fleetbook-run-history-');
    state = join(tmp, 'state.db');
    daemon = await DaemonProcess.start('run-history daemon', {
      playbooks: FIXTURES,
      state,
      env: {
        ...emulatorEnv(emu),
        FLEETBOOK_DAEMON_TOKEN: TOKEN,
        FLEETBOOK_CALLBACK_USERNAME: LISTENER.username,
        FLEETBOOK_CALLBACK_PASSWORD: LISTENER.password,
      },
    });
  });
  after(async () => {
    await daemon?.kill();
    await emu?.close();
  });

  const get = <T>(path: string) => daemon.getJson<T>(path);

  /** The run of `runId` once it has ended. */
  const ended = (runId: string) =>
    until(`run ${runId} ended`, async (seen) => {
      const s = await get<RunSummary>(`/runs/${runId}`);
      seen(s.status);
      return s.status === 'queued' || s.status === 'running' ? undefined : s;
    });

  it('GET /runs/{id} of a run that failed early gives the steps it never reached `unreached`', async () => {
    const runId = await daemon.startRun('stops-early', TOKEN);
    const s = await ended(runId);
    expect(s.status).to.equal('failed');
    expect(s.steps.map((x) => [x.id, x.status, x.within ?? null])).to.deep.equal([
      ['first', 'succeeded', null],
      ['quiet', 'skipped', null],
      ['stop', 'failed', null],
      ['each', 'unreached', null],
      ['inner', 'unreached', 'each'],
      ['after', 'unreached', null],
      ['bye', 'succeeded', null],
    ]);
    const cli = await fleetbook(['runs', 'show', runId, '--json'], { FLEETBOOK_STATE: state });
    expect(JSON.parse(cli.stdout), 'runs show --json').to.deep.equal(s);
  });

  it('GET /runs/{id} and `runs show --json` of a run in progress name its owner, as /status does', async () => {
    const runId = await daemon.startRun('held-up', TOKEN);
    const run = await until(`run ${runId} running`, async (seen) => {
      const r = await get<Json>(`/runs/${runId}`);
      seen(JSON.stringify(r));
      return r.status === 'running' ? r : undefined;
    });
    const status = await get<{ owners: { id: string; self?: boolean }[] }>('/status');
    const self = status.owners.find((o) => o.self);
    expect(self, JSON.stringify(status.owners)).to.not.equal(undefined);
    expect(run.owner, 'GET /runs/{id}').to.equal(self!.id);
    const cli = await fleetbook(['runs', 'show', runId, '--json'], { FLEETBOOK_STATE: state });
    expect((JSON.parse(cli.stdout) as Json).owner, 'runs show --json').to.equal(self!.id);
  });

  it('GET /runs gives each run as `runs list --json` does: its event and its device counts', async () => {
    const res = await fetch(`${daemon.url}/callbacks/DeviceUsage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...LISTENER, requestId: 'run-history-1', deviceResponse: {} }),
    });
    expect(res.status, await res.clone().text()).to.equal(200);
    const runId = await until('the run of the callback', async (seen) => {
      const runs = await get<Json[]>('/runs?playbook=usage-noted');
      seen(JSON.stringify(runs));
      return runs[0]?.id as string | undefined;
    });
    await ended(runId);
    const api = await get<Json[]>('/runs');
    const cli = await fleetbook(['runs', 'list', '--json'], { FLEETBOOK_STATE: state });
    expect(cli.code, cli.stderr).to.equal(0);
    expect(api, 'GET /runs beside runs list --json').to.deep.equal(JSON.parse(cli.stdout));
    const called = api.find((r) => r.id === runId)!;
    expect(called.event, 'the event that started the run').to.deep.include({ requestId: 'run-history-1' });
    expect(called.devices, 'its device counts').to.deep.equal({
      total: 0,
      accepted: 0,
      succeeded: 0,
      failed: 0,
      skipped: 0,
      unconfirmed: 0,
      byError: {},
    });
  });
});
