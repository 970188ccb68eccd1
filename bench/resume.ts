/**
 * P7R: resume after a crash at a million devices. The shipped nightly report on a 1,000,000-device account (the
 * emulator in its own process, as for P7), run by `fleetbook run` and killed (SIGKILL) once KILL_AFTER results are
 * in the ledger; then `fleetbook serve` on the same state file takes the run over when the dead process's lease
 * expires, and completes it. Measured: the daemon's peak resident set (sampled every 10 ms in the process), and
 * that every listed device has one result of each attempt in the ledger, none recorded twice.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { DaemonProcess, readState, untilDaemons } from '../test/helpers/daemon.js';
import { startEmulator } from './engine.js';
import type { BenchRow } from './types.js';

const ROOT = join(import.meta.dirname, '..');
const PLAYBOOK = 'nightly-location-report';
const KILL_AFTER = 300_000;
const TARGET_MB = 300;

export async function benchResume(): Promise<BenchRow[]> {
  const emu = await startEmulator(1_000_000);
  const dir = await mkdtemp(join(tmpdir(), 'fleetbook-bench-resume-'));
  let daemon: DaemonProcess | undefined;
  try {
    const state = join(dir, 'state.db');
    const playbooks = join(dir, 'playbooks');
    mkdirSync(playbooks);
    cpSync(join(ROOT, 'playbooks', `${PLAYBOOK}.yaml`), join(playbooks, `${PLAYBOOK}.yaml`));
    const [clientId, clientSecret, username, password] = emu.creds as [string, string, string, string];
    const env = {
      PATH: process.env.PATH ?? '',
      FLEETBOOK_API_URL: `${emu.url}/api`,
      FLEETBOOK_CLIENT_ID: clientId,
      FLEETBOOK_CLIENT_SECRET: clientSecret,
      FLEETBOOK_USERNAME: username,
      FLEETBOOK_PASSWORD: password,
      FLEETBOOK_STATE: state,
      FLEETBOOK_REPORTS_DIR: join(dir, 'reports'),
      FLEETBOOK_LEASE: '3s',
      FLEETBOOK_LOG_LEVEL: 'warn',
    };
    const run = spawn(
      process.execPath,
      [
        join(ROOT, 'bin', 'fleetbook.js'),
        'run',
        join(playbooks, `${PLAYBOOK}.yaml`),
        '--input',
        `account=${emu.account}`,
      ],
      { env, stdio: 'ignore' },
    );
    const exited = new Promise((r) => run.once('exit', r));
    const recorded = (db: Database.Database) =>
      db
        .prepare("SELECT coalesce(sum(json_array_length(device_ids)), 0) FROM ledger WHERE step = 'report'")
        .pluck()
        .get() as number;
    /** Whether the ledger has KILL_AFTER results: not while the run is still making its state file. */
    const enough = () => {
      try {
        return readState(state, recorded) >= KILL_AFTER;
      } catch {
        return false;
      }
    };
    await untilDaemons([], 'the results of the report', async () => (enough() ? true : undefined), 1_200_000);
    run.kill('SIGKILL');
    await exited;
    const atKill = readState(state, recorded);
    const runId = readState(state, (db) => db.prepare('SELECT id FROM runs').pluck().get() as string);

    const peakFile = join(dir, 'peak.json');
    const t0 = performance.now();
    daemon = await DaemonProcess.start('P7R daemon', {
      playbooks,
      state,
      env: {
        ...env,
        FLEETBOOK_CALLBACK_USERNAME: 'bench-listener',
        FLEETBOOK_CALLBACK_PASSWORD: 'bench-listener-password',
        MEMORY_PEAK_FILE: peakFile,
      },
      nodeArgs: ['--import', join(ROOT, 'test', 'helpers', 'memory-peak.mjs')],
    });
    const status = await untilDaemons(
      [daemon],
      'the resumed run to end',
      async () =>
        readState(state, (db) => {
          const s = db.prepare('SELECT status FROM runs WHERE id = ?').pluck().get(runId) as string;
          return s === 'running' || s === 'queued' ? undefined : s;
        }),
      1_200_000,
    );
    const seconds = (performance.now() - t0) / 1000;
    await daemon.stop('SIGTERM');
    const peak = JSON.parse(readFileSync(peakFile, 'utf8')) as { rss: number; heapUsed: number };
    const rssMb = peak.rss / 2 ** 20;
    const counts = readState(state, (db) => {
      const listed = (
        JSON.parse(
          db
            .prepare("SELECT state_json FROM run_steps WHERE run_id = ? AND step_key = 'devices'")
            .pluck()
            .get(runId) as string,
        ) as { storedItems: number }
      ).storedItems;
      const [results, distinct, firsts] = db
        .prepare(
          `SELECT count(*), count(DISTINCT j.value || '/' || l.attempts), sum(l.attempts = 1)
           FROM ledger l, json_each(l.device_ids) j WHERE l.run_id = ? AND l.step = 'report'`,
        )
        .raw()
        .get(runId) as number[];
      return { listed, results, distinct, firsts };
    });
    const once = counts.results === counts.distinct && counts.firsts === counts.listed;
    return [
      {
        id: 'P7R',
        measure:
          `shipped nightly report, 1,000,000-device account, \`fleetbook run\` killed (SIGKILL) with ${atKill} results in the ledger, then resumed by \`fleetbook serve\` on the same state file: ` +
          `run ${status} ${seconds.toFixed(1)} s after the daemon's start; ${counts.listed} devices listed, ${counts.results} results (${counts.distinct} distinct by device and attempt, ${counts.firsts} first attempts)`,
        value: `${once ? 'each device once' : 'DEVICES RECORDED TWICE'}; daemon peak RSS ${rssMb.toFixed(0)} MB (heap ${(peak.heapUsed / 2 ** 20).toFixed(0)} MB)`,
        target: `completes, each device once; <= ${TARGET_MB} MB`,
        pass: status === 'succeeded' && once && rssMb <= TARGET_MB,
      },
    ];
  } finally {
    await daemon?.kill();
    emu.child.kill();
    await rm(dir, { recursive: true, force: true });
  }
}
