/**
 * `fleetbook runs resume ID`: a run whose `fleetbook run` was killed (SIGKILL) after the service accepted its
 * suspend, and before the carrier carried it out, is left `running` with no process to go on with it: from cron,
 * no daemon takes it up. `runs show` says so and how to go on; `runs resume` refuses while a live process holds
 * the run, and while a secret it still reads is not set, leaving the run as it is; then goes on with it in the
 * foreground, confirming the request the service accepted without sending it again. The next `fleetbook run` of
 * the playbook warns of the run left, with the way on. On a SQLite file and on a PostgreSQL database. The built
 * binary in child processes, on an emulator of this process whose clock stands still until the test moves it
 * (dist/ must be built; `npm test` builds it).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { openStore } from '../../src/store/open.js';
import type { RunSummary, Store } from '../../src/store/store.js';
import { BIN, emulatorEnv, fleetbook } from '../helpers/cli.js';
import { postgresUrl } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { accountDevices, imei } from '../runner/helpers.js';

const PLAYBOOK = join(import.meta.dirname, '..', 'fixtures', 'runs-resume', 'suspend-then-note.yaml');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The outcomes the ledger holds for the playbook's one run, and its id; none before the run is stored. */
async function ledgerOf(store: Store): Promise<{ runId?: string; outcomes: string[] }> {
  const [run] = await store.listRuns({ playbook: 'suspend-then-note' });
  if (!run) return { outcomes: [] };
  const outcomes: string[] = [];
  for await (const page of store.eachDeviceResult(run.id)) outcomes.push(...page.map((r) => r.outcome));
  return { runId: run.id, outcomes };
}

const backends: [string, () => Promise<string>][] = [
  ['SQLite', async () => join(tempDir('fleetbook-runs-resume-'), 'state.db')],
  ['PostgreSQL', () => postgresUrl()],
];

for (const [backend, stateOf] of backends)
  describe(`fleetbook runs resume of a run its killed process left (child processes, ${backend})`, function () {
    this.timeout(90_000);
    let emu: Emulator;
    let state: string;
    let store: Store;

    before(async () => {
      // The clock stands still: the carrier carries out a request only once the test moves it.
      emu = await startEmulator({ port: 0, timeScale: 0, faults: { processingSeconds: 30 } });
      state = await stateOf();
      store = await openStore(state);
    });
    after(async () => {
      await store?.close();
      await emu?.close();
    });

    it('goes on with it from its checkpoints, confirming the accepted request without sending it again', async () => {
      const account = emu.defaults.accounts[0]!;
      const active = (await accountDevices(emu, account)).filter((d) => d.state === 'active').slice(0, 3);
      const imeis = active.map(imei);
      const env = { ...emulatorEnv(emu), FLEETBOOK_STATE: state };
      const note = { FLEETBOOK_SECRET_NOTE: 'resume-note' };
      const child = spawn(
        process.execPath,
        [BIN, 'run', PLAYBOOK, '--input', `account=${account}`, '--input', `imeis=${JSON.stringify(imeis)}`],
        { env: { PATH: process.env.PATH ?? '', ...env, ...note }, stdio: 'ignore' },
      );
      const exited = new Promise<unknown>((resolve) => child.on('exit', resolve));
      const deadline = Date.now() + 30_000;
      let found: string | undefined;
      for (;;) {
        const seen = await ledgerOf(store);
        found = seen.runId;
        if (seen.outcomes.filter((o) => o === 'accepted').length === 3) break;
        if (Date.now() > deadline)
          throw new Error(`the suspend was not accepted: ${seen.outcomes.join(', ')}`);
        await sleep(50);
      }
      const runId = found!;

      // Its process alive, waiting for the carrier: the run is that process's.
      const held = await fleetbook(['runs', 'resume', runId], { ...env, ...note });
      expect(held.code, held.stderr).to.equal(1);
      expect(held.stderr).to.match(
        new RegExp(
          `^fleetbook: run ${runId} of suspend-then-note is held by \`fleetbook run\` \\(pid ${child.pid} on `,
        ),
      );

      child.kill('SIGKILL');
      await exited;
      const shown = await fleetbook(['runs', 'show', runId], env);
      expect(shown.stdout).to.match(/: running\n/);
      expect(shown.stdout).to.include(
        `no process holds this run (the process that ran it stopped): \`fleetbook runs resume ${runId}\` goes on with it here, from its checkpoints; \`fleetbook runs cancel ${runId}\` ends it`,
      );

      // The next `fleetbook run` of the playbook (tonight's, from cron) says it was left, and the way on.
      const next = await fleetbook(
        [
          'run',
          PLAYBOOK,
          '--dry-run',
          '--input',
          `account=${account}`,
          '--input',
          `imeis=${JSON.stringify(imeis)}`,
        ],
        { ...env, ...note },
      );
      expect(next.code, next.stderr).to.equal(0);
      expect(next.stderr).to.include(
        `"message":"run ${runId} of suspend-then-note, started ${(await store.getRun(runId))!.startedAt}, was left unfinished by a process that stopped: \`fleetbook runs resume ${runId}\` goes on with it, \`fleetbook runs cancel ${runId}\` ends it"`,
      );

      // The note it still reads is a secret nobody set: refused, the run left as it is.
      const unset = await fleetbook(['runs', 'resume', runId.slice(0, 12)], env);
      expect([unset.code, unset.stderr]).to.deep.equal([
        2,
        `fleetbook: run ${runId}: playbook suspend-then-note reads secrets.NOTE, not set: set FLEETBOOK_SECRET_NOTE\n`,
      ]);
      expect((await store.getRun(runId))?.status).to.equal('running');

      // The carrier carries out the request; the resumed run confirms it by its status.
      emu.advance(60);
      const resumed = await fleetbook(['runs', 'resume', runId.slice(0, 12), '--json'], { ...env, ...note });
      expect(resumed.code, resumed.stderr).to.equal(0);
      const summary = JSON.parse(resumed.stdout) as RunSummary;
      expect([summary.runId, summary.status]).to.deep.equal([runId, 'succeeded']);
      expect(summary.steps.map((s) => [s.id, s.status])).to.deep.equal([
        ['suspend', 'succeeded'],
        ['note', 'succeeded'],
      ]);
      expect(summary.devices).to.include({ total: 3, succeeded: 3, accepted: 0, unconfirmed: 0 });
      // Sent once, by the killed process: the resumed run confirmed that request.
      const sent = emu.requests().filter((r) => r.action === 'devices.suspend');
      expect(sent.map((r) => r.status)).to.deep.equal(['Success']);
      expect(summary.steps[0]!.confirmation).to.deep.equal({ callback: 0, requestStatus: 3, stateRead: 0 });

      const again = await fleetbook(['runs', 'resume', runId], { ...env, ...note });
      expect([again.code, again.stderr]).to.deep.equal([
        1,
        `fleetbook: run ${runId} of suspend-then-note has ended (succeeded): nothing to resume\n`,
      ]);
    });
  });
