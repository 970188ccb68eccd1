/**
 * The shipped nightly location report on a 100,000-device account, killed part-way (SIGKILL of `fleetbook run`,
 * with reports created and results recorded), then resumed by `fleetbook serve` on the same state file once the
 * dead process's lease has expired. The daemon's heap is capped well below what holding the fleet would take,
 * and its memory sampled. The run completes, and every listed device is in the ledger and in the report once,
 * each located or failed once: the resumed run reads the reports created before the kill, and creates none of
 * them again.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { BIN, emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess, readState, untilDaemons } from '../helpers/daemon.js';
import { tempDir } from '../helpers/temp.js';
import { actionCounts, emulator } from '../runner/helpers.js';

const DEVICES = 100_000;
const PLAYBOOK = 'nightly-location-report';
/**
 * The daemon's old space (MB), and what `heapUsed` may show over it. A daemon serves its listener, console and
 * scheduler beside the run: at the 40 MB report-memory.test.ts gives a run alone, it ran out once under the load
 * of the whole suite (43 MB before its last collection). Holding the fleet would take several times this.
 */
const HEAP_MB = 56;
const YOUNG_MB = 6;
const RSS_MB = 200;
/** Devices with a result recorded when the run is killed: a few pages of the first reports. */
const KILL_AFTER = 5_000;

describe('daemon: the nightly report of 100,000 devices resumed after a kill, in bounded memory', function () {
  this.timeout(300_000);
  let emu: Emulator;
  // The emulator counts every request it receives, one refused for an expired session too (resent after a new
  // login). At 3,600 simulated seconds a second, its 20 idle minutes pass in a third of a second of a loaded
  // machine: sessions that never expire keep the count of createReport requests that of the reports created.
  before(
    async () =>
      (emu = await emulator({
        devicesPerAccount: DEVICES,
        timeScale: 3600,
        faults: { sessionTtlSeconds: 365 * 86_400 },
      })),
  );
  after(() => emu.close());

  it('completes the run, every device located or failed once, with no report created twice', async () => {
    const dir = tempDir('fb-resume-');
    const state = join(dir, 'state.db');
    const reports = join(dir, 'reports');
    const playbooks = join(dir, 'playbooks');
    mkdirSync(playbooks);
    cpSync(join('playbooks', `${PLAYBOOK}.yaml`), join(playbooks, `${PLAYBOOK}.yaml`));
    const env = {
      PATH: process.env.PATH ?? '',
      ...emulatorEnv(emu),
      FLEETBOOK_REPORTS_DIR: reports,
      FLEETBOOK_STATE: state,
      FLEETBOOK_LEASE: '3s',
    };
    const account = emu.defaults.accounts[0]!;
    const created = async () => (await actionCounts(emu))['location.createReport'] ?? 0;

    // The run, killed once it has created reports and recorded the results of some of them.
    const run = spawn(
      process.execPath,
      [BIN, 'run', join(playbooks, `${PLAYBOOK}.yaml`), '--input', `account=${account}`],
      { env, stdio: 'ignore' },
    );
    /** Devices with a result of the report in the ledger. */
    const recorded = () =>
      readState(
        state,
        (db) =>
          db
            .prepare(
              "SELECT coalesce(sum(json_array_length(device_ids)), 0) FROM ledger WHERE step = 'report'",
            )
            .pluck()
            .get() as number,
      );
    await untilDaemons(
      [],
      'results of the report recorded',
      async () => {
        try {
          return recorded() >= KILL_AFTER ? true : undefined;
        } catch {
          return undefined; // the state file is not made yet
        }
      },
      120_000,
    );
    run.kill('SIGKILL');
    await new Promise((r) => run.once('exit', r));
    const before = await created();
    /** The reports the killed run checkpointed: those it knew it had created. */
    const checkpointed = readState(state, (db) =>
      (
        db.prepare("SELECT state_json FROM run_steps WHERE step_key = 'report'").pluck().all() as string[]
      ).flatMap((j) =>
        ((JSON.parse(j) as { reports?: { reports: { txid: string }[] }[] }).reports ?? []).flatMap((c) =>
          c.reports.map((r) => r.txid),
        ),
      ),
    );
    const { runId, status, startedAt } = readState(
      state,
      (db) =>
        db.prepare('SELECT id AS runId, status, started_at AS startedAt FROM runs').get() as {
          runId: string;
          status: string;
          startedAt: string;
        },
    );
    expect(status).to.equal('running');

    // The daemon takes the run up once the dead process's lease has expired.
    const peakFile = join(dir, 'peak.json');
    const daemon = await DaemonProcess.start('resuming daemon', {
      playbooks,
      state,
      env: {
        ...env,
        FLEETBOOK_CALLBACK_USERNAME: 'listener',
        FLEETBOOK_CALLBACK_PASSWORD: 'listener-password-0123',
        MEMORY_PEAK_FILE: peakFile,
      },
      nodeArgs: [
        `--max-old-space-size=${HEAP_MB}`,
        '--import',
        join(import.meta.dirname, '..', 'helpers', 'memory-peak.mjs'),
      ],
    });
    try {
      const ended = await untilDaemons(
        [daemon],
        'the resumed run to end',
        async () => {
          const s = readState(state, (db) =>
            db.prepare('SELECT status FROM runs WHERE id = ?').pluck().get(runId),
          );
          return s === 'running' || s === 'queued' ? undefined : (s as string);
        },
        240_000,
      );
      expect(ended, daemon.stderr.slice(-2000)).to.equal('succeeded');
    } finally {
      await daemon.stop('SIGTERM');
    }
    const peak = JSON.parse(readFileSync(peakFile, 'utf8')) as { rss: number; heapUsed: number };
    expect(peak.heapUsed / 2 ** 20, 'peak heap (MB)').to.be.below(HEAP_MB + YOUNG_MB);
    expect(peak.rss / 2 ** 20, 'peak resident set (MB)').to.be.below(RSS_MB);

    // Every device once in the ledger, with one result of each attempt (none read twice), and in the report.
    const store = new SqliteStore(state);
    const ledger = new Map<string, string>();
    let listed: number;
    let txids: string[];
    try {
      listed = ((await store.loadSteps(runId)).get('devices') as { storedItems: number }).storedItems;
      for await (const page of store.eachDeviceResult(runId, 'report'))
        for (const r of page) ledger.set(r.deviceId, r.outcome);
      // Each device's result of each attempt once: a page recorded before the kill was not recorded again.
      const [results, distinct, firsts] = store.db
        .prepare(
          `SELECT count(*), count(DISTINCT j.value || '/' || l.attempts), sum(l.attempts = 1)
           FROM ledger l, json_each(l.device_ids) j WHERE l.run_id = ? AND l.step = 'report'`,
        )
        .raw()
        .get(runId) as number[];
      expect(results, 'results of one device in one attempt').to.equal(distinct);
      expect(firsts, 'first-attempt results').to.equal(listed);
      // Each report the run made gave its devices' results under its txid.
      txids = store.db
        .prepare(`SELECT DISTINCT request_id FROM ledger WHERE run_id = ? AND step = 'report'`)
        .pluck()
        .all(runId) as string[];
    } finally {
      await store.close();
    }
    expect(listed).to.be.greaterThan(DEVICES * 0.8);
    expect(ledger.size).to.equal(listed);
    // One report a batch of 10,000 for the first attempt, and one for the cache misses of each batch, sent as
    // soon as its results come (so some may be made before the kill): none made twice, by either process.
    const made = txids.length;
    expect(made).to.be.within(Math.ceil(listed / 10_000), 2 * Math.ceil(listed / 10_000));
    expect(before, 'reports created before the kill').to.be.within(1, made);
    // The reports the killed run knew of were read by the daemon, under their txids, not made again.
    expect(checkpointed.length, 'reports checkpointed before the kill').to.be.at.least(1);
    expect(txids).to.include.members(checkpointed);
    const csvFile = readFileSync(join(reports, `${startedAt.slice(0, 10)}-locations.csv`), 'utf8');
    const rows = csvFile.trimEnd().split('\n').slice(1);
    expect(rows.length).to.equal(listed);
    expect(new Map(rows.map((l) => [l.split(',')[0] as string, l.split(',')[2] as string]))).to.deep.equal(
      ledger,
    );
    expect(await created(), 'reports created in all, each once').to.equal(made);
  });
});
