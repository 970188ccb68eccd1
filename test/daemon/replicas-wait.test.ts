/**
 * A run waiting on one replica for a callback the load balancer gives to another (docs/replicas.md): the other
 * replica's commit reaches it by the database's notices. Here both replicas' listening connections end (a
 * database restart, a network cut) just before the callback comes: once they listen again, the waiting run
 * hears it, rather than time out for a callback that came. Two daemon processes on one PostgreSQL database.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess, untilDaemons } from '../helpers/daemon.js';
import { postgresUrl } from '../helpers/postgres.js';

const PLAYBOOK = join(import.meta.dirname, '..', 'fixtures', 'replicas', 'wait-usage.yaml');
const TOKEN = 'replicas-wait-daemon-token-0123456789';
const CALLBACK = { username: 'wait-listener', password: 'wait-listener-password' };
/** The wait step's timeout (the playbook's): the run must end well before it. */
const TIMEOUT_MS = 40_000;

describe('daemon: a run waiting on one replica for a callback another one stored', function () {
  this.timeout(90_000);
  let emu: Emulator;
  let db: pg.Client;
  const daemons: DaemonProcess[] = [];

  before(async () => {
    emu = await startEmulator({ port: 0, timeScale: 0, seed: 1, accounts: 1, devicesPerAccount: 10 });
  });
  after(async () => {
    await Promise.all(daemons.map((d) => d.kill()));
    await db?.end();
    await emu?.close();
  });

  const until = <T>(what: string, check: () => Promise<T | undefined>, ms?: number) =>
    untilDaemons(daemons, what, check, ms);

  it('hears it once its listening connection is back', async () => {
    const url = await postgresUrl();
    db = new pg.Client(url);
    await db.connect();
    for (const name of ['replica a', 'replica b'])
      daemons.push(
        await DaemonProcess.start(name, {
          playbooks: PLAYBOOK,
          state: url,
          env: {
            ...emulatorEnv(emu),
            FLEETBOOK_CALLBACK_USERNAME: CALLBACK.username,
            FLEETBOOK_CALLBACK_PASSWORD: CALLBACK.password,
            FLEETBOOK_DAEMON_TOKEN: TOKEN,
            FLEETBOOK_LOG_LEVEL: 'warn',
          },
        }),
      );
    const [a, b] = daemons as [DaemonProcess, DaemonProcess];
    const feeds = async () =>
      (
        await db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'fleetbook-feed'",
        )
      ).rows[0]?.n;
    await until('both replicas listening', async () => ((await feeds()) === 2 ? true : undefined));

    // The run waits on replica b.
    const runId = await b.startRun('wait-usage', TOKEN, { request: 'usage-1' });
    const status = async () =>
      (await db.query<{ status: string }>('SELECT status FROM runs WHERE id = $1', [runId])).rows[0]?.status;
    await until('the run waiting', async () => ((await status()) === 'running' ? true : undefined));

    // The listening connections end; the callback comes to replica a while they are down (they listen again a
    // second later).
    await db.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'fleetbook-feed'",
    );
    await until('the listening connections gone', async () => ((await feeds()) === 0 ? true : undefined));
    const ack = await fetch(`${a.url}/callbacks/DeviceUsage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        ...CALLBACK,
        requestId: 'usage-1',
        deviceResponse: {
          alertServiceResponse: { triggerName: 'overuse', accountName: emu.defaults.accounts[0] },
        },
      }),
    });
    expect(ack.status, await ack.clone().text()).to.equal(200);

    const ended = await until(
      'the run ended',
      async () => {
        const s = await status();
        return s === 'running' || s === 'queued' ? undefined : s;
      },
      TIMEOUT_MS + 10_000,
    );
    // A wait that timed out would have failed the run ("no DeviceUsage event within 40s").
    expect(ended, 'the run, whose wait heard the callback').to.equal('succeeded');
  });
});
