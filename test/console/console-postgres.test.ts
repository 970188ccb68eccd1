/**
 * The console's JSON API on PostgreSQL (docs/console.md: it works on both stores), and beyond loopback: two
 * replicas of `fleetbook serve` on one database, each serving the console. A run started from one replica's
 * console, a report whose devices get several outcomes, is listed, read, paged and filtered by the other one
 * (every reading is the store's, not the replica's memory). Bound to 0.0.0.0 with a token, reading needs it.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { emulatorEnv } from '../helpers/cli.js';
import { startConsoleRun } from '../helpers/console-suite.js';
import { DaemonProcess } from '../helpers/daemon.js';
import { postgresUrl } from '../helpers/postgres.js';
import { emulator } from '../runner/helpers.js';
import { FIXTURES } from '../helpers/console-operator.js';

const TOKEN = 'console-postgres-token-0123456789';

type Json = Record<string, unknown>;

describe('console: two replicas on one PostgreSQL database, beyond loopback', function () {
  this.timeout(120_000);
  let emu: Emulator;
  const daemons: DaemonProcess[] = [];

  before(async () => {
    emu = await emulator({ devicesPerAccount: 200 });
    emu.setFaults({ deviceErrors: { 'ABSENT SUBSCRIBER': 0.05 } });
    const state = await postgresUrl();
    for (const name of ['first replica', 'second replica'])
      daemons.push(
        await DaemonProcess.start(name, {
          playbooks: FIXTURES,
          state,
          host: '0.0.0.0',
          env: {
            ...emulatorEnv(emu),
            FLEETBOOK_CALLBACK_USERNAME: 'console-pg-listener',
            FLEETBOOK_CALLBACK_PASSWORD: 'console-pg-listener-password',
            FLEETBOOK_CONSOLE_TOKEN: TOKEN,
            FLEETBOOK_LOG_LEVEL: 'warn',
          },
        }),
      );
  });

  after(async () => {
    for (const d of daemons) await d.kill();
    await emu?.close();
  });

  const api = async <T = Json>(d: DaemonProcess, path: string, init: RequestInit = {}): Promise<T> => {
    const res = await fetch(`${d.url}/console/api${path}`, {
      ...init,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...init.headers },
    });
    const text = await res.text();
    expect(res.status, `${init.method ?? 'GET'} /console/api${path}: ${text.slice(0, 400)}`).to.be.oneOf([
      200, 202,
    ]);
    return JSON.parse(text) as T;
  };

  it('needs the token to read, and shows one replica the run another started', async () => {
    const [first, second] = daemons as [DaemonProcess, DaemonProcess];
    const refused = await fetch(`${second.url}/console/api/runs`);
    expect(refused.status, 'reading without the token, beyond loopback').to.equal(401);
    expect(await api(second, '/overview')).to.include({ store: 'postgres', readNeedsToken: true });

    const runId = await startConsoleRun(first, 'location-report', TOKEN, { batch: 50 });
    let run: { status: string; devices?: { total: number; byError: Record<string, number> } } | undefined;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      run = (await api<{ run: typeof run }>(second, `/runs/${runId}`)).run;
      if (run?.status !== 'running' && run?.status !== 'queued') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(run?.status, 'the report, read from the other replica').to.equal('succeeded');
    const listed = await api<{ runs: { id: string }[] }>(
      second,
      '/runs?playbook=location-report&trigger=manual',
    );
    expect(listed.runs.map((r) => r.id)).to.deep.equal([runId]);

    // Every device once, by pages of 7, and the error type filter gives what the counts say.
    const seen: string[] = [];
    let after: string | undefined;
    do {
      const page = await api<{ devices: { deviceId: string; step: string }[]; next?: string }>(
        second,
        `/runs/${runId}/devices?limit=7${after ? `&after=${after}` : ''}`,
      );
      seen.push(...page.devices.map((d) => `${d.step}/${d.deviceId}`));
      after = page.next;
    } while (after);
    expect(new Set(seen).size, 'each device once').to.equal(seen.length);
    expect(seen.length, 'the table, against the run counts').to.equal(run!.devices!.total);
    const absent = run!.devices!.byError['ABSENT SUBSCRIBER'] ?? 0;
    expect(absent, 'the fault gave some devices ABSENT SUBSCRIBER').to.be.greaterThan(0);
    const filtered = await api<{ devices: { errorType: string }[] }>(
      second,
      `/runs/${runId}/devices?limit=500&errorType=${encodeURIComponent('ABSENT SUBSCRIBER')}`,
    );
    expect(filtered.devices.map((d) => d.errorType)).to.deep.equal(Array(absent).fill('ABSENT SUBSCRIBER'));
    const device = seen[0]!.split('/')[1]!;
    const history = await api<{ results: { runId: string }[] }>(second, `/devices/${device}`);
    expect(history.results.map((r) => r.runId)).to.include(runId);
    const chart = await api<{ buckets: Json[] }>(second, '/charts/runs?hours=2');
    expect(chart.buckets.reduce((n, b) => n + (b.succeeded as number), 0)).to.be.at.least(1);
  });
});
