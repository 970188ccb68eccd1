/**
 * Five consecutive failed logins lock the user (spec/public-api-facts.md), whichever process sent them. The
 * logins that may have failed were counted in one process only: two `fleetbook run`s in a row with a wrong
 * password whose refusals were lost (3 + 3 logins) locked the user, and so did five runs with a plain wrong
 * password (one refusal each). Now they are counted in the state file, by service and user, and every process on
 * it stops before the fifth, saying why and how to go on; `fleetbook logins` shows the count and `fleetbook
 * logins clear USER` forgets it. The built binary, several processes on one state file, against an emulator over
 * loopback that models the lockout, its `resetNext` fault losing the answers of the logins.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { BIN, emulatorEnv, fleetbook } from '../helpers/cli.js';
import { readState } from '../helpers/daemon.js';
import { calls, control, setFaults } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

/** One listing, with no `retry:`: each run sends one login (and its attempts while its answers are lost). */
const LIST = join(import.meta.dirname, '..', 'fixtures', 'login-count', 'list-once.yaml');

const WRONG = 'not-the-password-2468';

describe('logins that may have failed, counted across processes on one state file (child processes)', function () {
  this.timeout(90_000);
  let emu: Emulator;
  let tmp: string;
  let n = 0;
  let state: string;

  before(async () => {
    emu = await startEmulator({ port: 0, timeScale: 0 });
    tmp = tempDir('fleetbook-login-count-');
  });
  beforeEach(async () => {
    await emu.reset();
    state = join(tmp, `state-${++n}.db`);
  });
  after(async () => {
    await emu?.close();
  });

  const env = (extra: Record<string, string> = {}) => ({
    ...emulatorEnv(emu),
    FLEETBOOK_STATE: state,
    ...extra,
  });
  const run = (extra: Record<string, string> = {}) =>
    fleetbook(['run', LIST, '--input', `account=${emu.defaults.accounts[0]!}`], env(extra));

  async function locked(): Promise<boolean> {
    const world = (await control(emu, 'GET', '/accounts?devices=0')) as {
      users: { username: string; locked: boolean }[];
    };
    return world.users.find((u) => u.username === emu.defaults.username)!.locked;
  }
  const logins = async () => (await calls(emu)).actions['session.login'] ?? 0;

  it('two runs with a wrong password whose refusals are lost: four logins, and the user is never locked', async () => {
    await setFaults(emu, { resetNext: { 'session.login': 50 } });
    const first = await run({ FLEETBOOK_PASSWORD: WRONG });
    expect(first.code).to.equal(1);
    expect(await logins()).to.equal(3);
    const second = await run({ FLEETBOOK_PASSWORD: WRONG });
    expect(second.code).to.equal(1);
    expect(await logins(), 'logins sent by both runs').to.equal(4);
    expect(await locked(), 'the user is locked').to.equal(false);
    expect(second.stderr).to.match(/not sending another session login as admin: 4 logins since the last one/);
    expect(second.stderr).to.match(/counted by the processes on this store/);
    expect(second.stderr).to.match(/five consecutive failed logins lock the user/);
    expect(second.stderr).to.match(/fleetbook logins clear admin/);
  });

  it('five runs and calls with a plain wrong password: four refusals, then none sent; clear lets the right one in', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await run({ FLEETBOOK_PASSWORD: WRONG });
      expect(r.stderr).to.match(/session login as admin was refused: HTTP 401/);
    }
    // A `fleetbook call` on the same state file counts with the runs.
    const call = await fleetbook(
      ['call', 'devices.list', '--body', JSON.stringify({ accountName: emu.defaults.accounts[0]! })],
      env({ FLEETBOOK_PASSWORD: WRONG }),
    );
    expect(call.code).to.equal(1);
    expect(call.stderr).to.match(/was refused: HTTP 401/);
    expect(await logins()).to.equal(4);
    const fifth = await run({ FLEETBOOK_PASSWORD: WRONG });
    expect(fifth.code).to.equal(1);
    expect(fifth.stderr).to.match(/not sending another session login as admin: 4 logins/);
    expect(await logins(), 'logins sent').to.equal(4);
    expect(await locked()).to.equal(false);

    // The count holds for the right password too: the service counts the user's failures, whatever the password.
    const fixed = await run();
    expect(fixed.code).to.equal(1);
    expect(fixed.stderr).to.match(/not sending another session login as admin: 4 logins/);
    expect(await logins()).to.equal(4);

    const shown = await fleetbook(['logins'], env());
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.include(`${emu.baseUrl}`);
    expect(shown.stdout).to.match(/admin\s+4\s/);
    expect(shown.stdout).to.match(/stopped/);
    const json = await fleetbook(['logins', '--json'], env());
    const rows = JSON.parse(json.stdout) as {
      service: string;
      username: string;
      failed: number;
      stopped: boolean;
    }[];
    expect(rows.map((r) => [r.service, r.username, r.failed, r.stopped])).to.deep.equal([
      [emu.baseUrl, 'admin', 4, true],
    ]);

    const cleared = await fleetbook(['logins', 'clear', 'admin'], env());
    expect(cleared.code, cleared.stderr).to.equal(0);
    expect(cleared.stdout).to.match(/cleared 4 logins of admin on /);
    const ok = await run();
    expect(ok.code, ok.stderr).to.equal(0);
    expect(await logins()).to.equal(5);
    expect(await locked()).to.equal(false);
    expect((await fleetbook(['logins'], env())).stdout).to.match(/no session logins counted/);
  });

  it('a login that succeeds starts the count again for every process', async () => {
    for (let i = 0; i < 3; i++) await run({ FLEETBOOK_PASSWORD: WRONG });
    expect((await run()).code).to.equal(0);
    for (let i = 0; i < 3; i++) await run({ FLEETBOOK_PASSWORD: WRONG });
    expect(await logins()).to.equal(7);
    expect((await run()).code).to.equal(0);
    expect(await locked()).to.equal(false);
  });

  it('a process killed with its login in flight: the next login that succeeds ends its doubt', async () => {
    // Each round a `fleetbook run` is killed while its login waits for its answer (a daemon killed and
    // restarted by its supervisor), then a run logs in and succeeds. Its login, sent after the dead process's,
    // reached the service after it, if that one reached it at all: the service's count started again.
    for (let round = 0; round < 4; round++) {
      await setFaults(emu, { latencyMs: 1500 });
      const had = sending();
      const child = spawn(
        process.execPath,
        [BIN, 'run', LIST, '--input', `account=${emu.defaults.accounts[0]!}`],
        {
          env: { PATH: process.env.PATH ?? '', ...env() },
          stdio: 'ignore',
        },
      );
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        for (let i = 0; sending() <= had; i++) {
          expect(i, 'the killed run sends its login').to.be.lessThan(200);
          await sleep(50);
        }
      } finally {
        child.kill('SIGKILL');
        await exited;
      }
      await setFaults(emu, {});
      const next = await run();
      expect([round, next.code, next.stderr.match(/not sending another session login.*/)?.[0]]).to.deep.equal(
        [round, 0, undefined],
      );
    }
    const shown = await fleetbook(['logins'], { FLEETBOOK_STATE: state });
    expect(shown.stdout, shown.stdout).to.match(/^no session logins counted/);
  });

  /** The logins counted and not answered yet in the state file. */
  function sending(): number {
    if (!existsSync(state)) return 0;
    return readState(state, (db) => {
      if (!db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'session_logins'").get()) return 0;
      return (
        db.prepare("SELECT count(*) AS n FROM session_logins WHERE state = 'sending'").get() as { n: number }
      ).n;
    });
  }
});
