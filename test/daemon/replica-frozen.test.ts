/**
 * A replica frozen for longer than its lease, its run taken over by another, then thawed (docs/replicas.md: it
 * "stops itself, exit 1, rather than act on runs that are now another's"). Two replicas on one PostgreSQL
 * database; the first is frozen (SIGSTOP) with suspend calls in flight, the second claims the run once the lease
 * has expired, reconciles the calls of unknown outcome by the devices' state, and ends the run; then the first is
 * thawed (SIGCONT). Whatever it still does before it stops, the run's ledger must stay the second one's: every
 * device `succeeded`, each suspended once by the emulator's counters.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import type { Emulator } from '../../src/emulator/index.js';
import { emulatorWithActive, sleep } from '../helpers/chaos.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess, untilDaemons } from '../helpers/daemon.js';
import { postgresUrl } from '../helpers/postgres.js';
import { calls } from '../runner/helpers.js';

const DEVICES = 600;
const PLAYBOOK = join(import.meta.dirname, '..', 'fixtures', 'replicas', 'suspend-fleet.yaml');
const TOKEN = 'replica-frozen-daemon-token-0123456789';
const LEASE_MS = 3000;
/**
 * The suspend calls in flight when the first replica is frozen are applied and answered this long after they
 * arrive: well within the soonest takeover after a call leaves (the lease less a renewal interval, 2 s). A call
 * the emulator had not applied when the second replica reads the devices' state is watched for the step's
 * `confirm.timeout` (5 s in the fixture) before it is sent again, as docs/replicas.md says; before that watch, at
 * 2 s and once at 1 s under a full run's load, a batch of 100 was suspended twice. At 500 ms the calls are still
 * in flight when the replica freezes, as soon as their checkpoint shows.
 */
const SLOW_MS = 500;

describe('daemon: a replica frozen past its lease, then thawed', function () {
  this.timeout(90_000);
  let emu: Emulator;
  let account: string;
  let active: string[];
  let db: pg.Client;
  const daemons: DaemonProcess[] = [];

  before(async () => {
    ({ emu, account, active } = await emulatorWithActive(DEVICES, 1000));
  });

  after(async () => {
    for (const d of daemons) {
      d.proc.kill('SIGCONT');
      await d.kill();
    }
    await db?.end();
    await emu?.close();
  });

  const until = <T>(what: string, check: () => Promise<T | undefined>) => untilDaemons(daemons, what, check);

  it('writes nothing for the run another replica took over', async () => {
    const url = await postgresUrl();
    db = new pg.Client(url);
    await db.connect();
    const start = async (name: string) => {
      const d = await DaemonProcess.start(name, {
        playbooks: PLAYBOOK,
        state: url,
        env: {
          ...emulatorEnv(emu),
          FLEETBOOK_CALLBACK_USERNAME: 'frozen-listener',
          FLEETBOOK_CALLBACK_PASSWORD: 'frozen-listener-password',
          FLEETBOOK_DAEMON_TOKEN: TOKEN,
          FLEETBOOK_LEASE: `${LEASE_MS}ms`,
          FLEETBOOK_LOG_LEVEL: 'warn',
        },
      });
      daemons.push(d);
      return d;
    };
    const [first] = [await start('first replica'), await start('second replica')];
    emu.setFaults({ latencyMs: SLOW_MS });
    const runId = await first!.startRun('suspend-fleet', TOKEN, { account });

    // A suspend is being sent (its checkpoint says so before the request leaves): the first replica freezes.
    await until('a suspend call in flight', async () => {
      const { rows } = await db.query(
        `SELECT 1 FROM run_steps WHERE run_id = $1 AND state_json LIKE '%"status":"sending"%'`,
        [runId],
      );
      return rows.length ? true : undefined;
    });
    first!.proc.kill('SIGSTOP');
    const frozenAt = new Date().toISOString();
    emu.setFaults({ latencyMs: 20 });

    // The second replica takes the run over once the lease has expired, and ends it.
    const ended = await until('the run ended by the second replica', async () => {
      const { rows } = await db.query<{ status: string }>('SELECT status FROM runs WHERE id = $1', [runId]);
      return rows[0]!.status === 'running' || rows[0]!.status === 'queued' ? undefined : rows[0]!.status;
    });
    expect(ended).to.equal('succeeded');
    const before = await db.query(
      `SELECT outcome, count(*)::int AS n FROM device_results WHERE run_id = $1 AND step = 'suspend' GROUP BY outcome`,
      [runId],
    );
    expect(before.rows, 'the ledger the second replica wrote').to.deep.equal([
      { outcome: 'succeeded', n: DEVICES },
    ]);

    // Thawed, the first replica finds its lease lost and stops.
    first!.proc.kill('SIGCONT');
    // Its next renewal (a third of the lease) finds the lease lost; the bound only tells a replica that never
    // stops from a slow machine, and leaves the rest of the test's time to what follows.
    const exit = await Promise.race([first!.exited, sleep(40_000).then(() => undefined)]);
    expect(exit, 'the thawed replica stopped').to.deep.equal({ code: 1, signal: null });

    const late = await db.query<{ outcome: string; n: number; at: string }>(
      `SELECT outcome, json_array_length(device_ids) AS n, error_type, request_id, at FROM ledger WHERE run_id = $1 AND at > $2 ORDER BY seq`,
      [runId, frozenAt],
    );
    const after = await db.query(
      `SELECT outcome, count(*)::int AS n FROM device_results WHERE run_id = $1 AND step = 'suspend' GROUP BY outcome`,
      [runId],
    );
    expect(
      after.rows,
      `the ledger after the thaw; entries written since the freeze: ${JSON.stringify(late.rows)}`,
    ).to.deep.equal([{ outcome: 'succeeded', n: DEVICES }]);
    const { rows: status } = await db.query('SELECT status FROM runs WHERE id = $1', [runId]);
    expect(status, 'the run after the thaw').to.deep.equal([{ status: 'succeeded' }]);
    const c = await calls(emu);
    expect(
      active.filter((id) => (c.devices[id] ?? []).length !== 1),
      'devices not suspended exactly once',
    ).to.deep.equal([]);
  });
});
