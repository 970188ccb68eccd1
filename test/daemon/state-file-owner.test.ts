/**
 * One owner per state file (issue: two processes on one state file mutated devices twice). Measured before:
 * a second `fleetbook serve` on the same FLEETBOOK_STATE started without complaint and resumed the first one's
 * unfinished runs alongside it (344 of 600 devices suspended twice); a daemon restarted while a `fleetbook run`
 * worked on the same file adopted the CLI's run (104 of 200 devices suspended twice, and the CLI exited 0).
 *
 * Real processes: the built CLI and daemon, against the emulator of this process, which counts every mutation
 * of every device.
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Emulator, Hold } from '../../src/emulator/index.js';
import { BIN, emulatorEnv, fleetbook } from '../helpers/cli.js';
import { DaemonProcess, runsIn } from '../helpers/daemon.js';
import { accountDevices, calls, emulator, imei, sizeForActive } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'ownership');
const PLAYBOOK = join(FIXTURES, 'suspend-slowly.yaml');
const TOKEN = 'ownership-test-daemon-token-0123456789';
const ACTIVE = 120;
/** The playbook's batch size. */
const BATCH = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Suspends let through before the emulator holds the next ones: the run has begun, and cannot end. */
const BEFORE_HOLD = 2;

describe('daemon: one owner per state file', function () {
  // Three daemon starts and a run of 30 suspends: beside six busy loops on its core the first case took 57 s to
  // its last daemon's start (each start 12-13 s), past 90 s in all twice in three runs. No case times anything.
  this.timeout(180_000);
  let emu: Emulator;
  let account: string;
  let active: string[];
  let dir: string;
  let size: number;
  const daemons: DaemonProcess[] = [];
  let hold: Hold | undefined;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 400 });
    account = emu.defaults.accounts[0]!;
    size = await sizeForActive(emu, account, ACTIVE);
    expect(size, `the seed has ${ACTIVE} active devices`).to.be.greaterThan(0);
    dir = tempDir('fleetbook-state-file-owner-');
  });

  beforeEach(async () => {
    emu.reset({ devicesPerAccount: size });
    active = (await accountDevices(emu, account)).filter((d) => d.state === 'active').map(imei);
    expect(active).to.have.length(ACTIVE);
    // Each suspend takes a while; and the test holds some (`holdSuspends`), so that the run is still working when
    // the processes around it change, however slow the machine.
    emu.setFaults({ latencyMs: 150 });
  });

  afterEach(async () => {
    hold?.release();
    hold = undefined;
    for (const d of daemons.splice(0)) await d.kill();
  });

  after(async () => {
    await emu?.close();
  });

  const env = (extra: Record<string, string> = {}) => ({
    ...emulatorEnv(emu),
    FLEETBOOK_CALLBACK_USERNAME: 'owner-test',
    FLEETBOOK_CALLBACK_PASSWORD: 'owner-test-password',
    FLEETBOOK_DAEMON_TOKEN: TOKEN,
    FLEETBOOK_RATE: '1000',
    FLEETBOOK_LOG_LEVEL: 'info',
    ...extra,
  });

  async function daemon(
    name: string,
    state: string,
    extra: Record<string, string> = {},
    playbooks = FIXTURES,
  ): Promise<DaemonProcess> {
    const d = await DaemonProcess.start(name, { playbooks, state, env: env(extra) });
    daemons.push(d);
    return d;
  }

  /**
   * Every active device suspended exactly once, no other device touched, and no suspend request sent twice (a
   * request for a device already suspended changes nothing in the emulator, but it is an action taken twice).
   */
  async function expectEachSuspendedOnce(context: string): Promise<void> {
    const { devices, actions } = await calls(emu);
    expect(actions['devices.suspend'], `suspend requests, of ${BATCH} devices each (${context})`).to.equal(
      ACTIVE / BATCH,
    );
    const twice = active.filter(
      (id) => (devices[id] ?? []).filter((m) => m.action === 'devices.suspend').length > 1,
    );
    const never = active.filter((id) => !(devices[id] ?? []).some((m) => m.action === 'devices.suspend'));
    expect(twice, `devices suspended more than once (${context})`).to.deep.equal([]);
    expect(never, `devices never suspended (${context})`).to.deep.equal([]);
    expect(Object.keys(devices).filter((id) => !active.includes(id))).to.deep.equal([]);
  }

  /** From now on, the emulator holds the suspends after the next BEFORE_HOLD, until `releaseSuspends`. */
  function holdSuspends(): void {
    hold = emu.hold('devices.suspend', BEFORE_HOLD);
  }

  /** Resolves once the run has had its first suspends and waits for a held one: it has begun, and cannot end. */
  async function untilSuspendHeld(): Promise<void> {
    await until('a suspend held, after the first ones', () => (hold?.held ?? 0) > 0);
    expect((await calls(emu)).actions['devices.suspend'], 'suspends before the hold').to.equal(BEFORE_HOLD);
  }

  /**
   * Lets the held suspends act, as the requests in flight at a kill do (the emulator acts on a request whatever
   * became of its sender), and waits until they have.
   */
  async function releaseSuspends(): Promise<void> {
    hold?.release();
    hold = undefined;
    await until('the emulator to answer the suspends it held', () => emu.requestsInFlight() === 0);
  }

  async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(50);
    }
  }

  it('refuses a second daemon (exit 2, naming the file and the owner); after a SIGKILL the next one resumes', async () => {
    const state = join(dir, 'two-daemons.db');
    const first = await daemon('first daemon', state);
    holdSuspends();
    const runId = await first.startRun('suspend-slowly', TOKEN, { account });
    await untilSuspendHeld();

    const second = await DaemonProcess.start('second daemon', {
      playbooks: FIXTURES,
      state,
      env: env(),
    }).then(
      (d) => {
        daemons.push(d);
        return undefined;
      },
      (e: unknown) => e as Error,
    );
    expect(second, 'the second daemon started on a state file the first owns').to.be.instanceOf(Error);
    const refused = daemons.length === 1 ? DaemonProcess.all[DaemonProcess.all.length - 1]! : undefined;
    expect(refused, 'the refused daemon').to.not.equal(undefined);
    expect((await refused!.exited).code).to.equal(2);
    expect(refused!.stderr).to.include(
      `the state file ${state} (--state) is in use by another fleetbook serve`,
    );
    expect(refused!.stderr).to.include(`pid ${first.proc.pid} on `);
    expect(refused!.stderr).to.match(/, since 20\d\d-\d\d-\d\dT/);

    expect(
      runsIn(state, 'suspend-slowly').find((r) => r.id === runId)?.status,
      'the run, when the first is killed',
    ).to.equal('running');
    await first.stop('SIGKILL');
    daemons.splice(daemons.indexOf(first), 1);
    await releaseSuspends();
    const next = await daemon('next daemon', state);
    await until(
      'the resumed run ends',
      () => runsIn(state, 'suspend-slowly').find((r) => r.id === runId)?.status === 'succeeded',
    );
    expect(
      next.logs().some((l) => l.message === 'resuming unfinished runs'),
      next.stderr,
    ).to.equal(true);
    await expectEachSuspendedOnce('a second daemon, then a SIGKILL of the first');
  });

  it('a daemon restarted while `fleetbook run` works on the same file leaves the run to it', async () => {
    const state = join(dir, 'cli-and-daemon.db');
    const first = await daemon('daemon before', state);
    holdSuspends();
    const cli = fleetbook(['run', PLAYBOOK, '--input', `account=${account}`, '--json'], {
      ...env(),
      FLEETBOOK_STATE: state,
    });
    await untilSuspendHeld();
    expect(
      runsIn(state, 'suspend-slowly').filter((r) => r.status === 'running'),
      'the cli run, running',
    ).to.have.length(1);

    await first.stop('SIGKILL');
    daemons.splice(daemons.indexOf(first), 1);
    // Released before the next daemon starts: a start on a loaded machine outlasts the cli's wait for an answer
    // (30 s), and the run has 28 suspends left to send beside it.
    await releaseSuspends();
    const after = await daemon('daemon after', state);
    const done = await cli;
    expect(done.code, done.stderr).to.equal(0);
    expect((JSON.parse(done.stdout) as { status: string }).status).to.equal('succeeded');
    // A suspend the daemon would have sent for a run not its own is answered before the counts are read.
    await until('the emulator to answer every request', () => emu.requestsInFlight() === 0);
    await expectEachSuspendedOnce('a cli run across a daemon restart');
    expect(after.logs().filter((l) => l.message === 'resuming unfinished runs')).to.deep.equal([]);
  });

  it('a killed `fleetbook run` leaves its run to the daemon once its lease expires, of a playbook it does not load', async () => {
    const state = join(dir, 'cli-killed.db');
    // Short, for the daemon to take the run over soon; long enough that a loaded machine's daemon, renewing it
    // every third, does not lose its own (a 1 s lease was lost beside two busy processes).
    const lease = { FLEETBOOK_LEASE: '5s' };
    // The daemon loads another directory: it finishes the run with the definition the store kept of its version.
    const others = join(dir, 'other-playbooks');
    await mkdir(others);
    await writeFile(
      join(others, 'other.yaml'),
      'version: 1\nname: other\non: { manual: true }\nsteps:\n  - id: say\n    uses: log\n    with: { message: other }\n',
    );
    const d = await daemon('daemon beside a cli', state, lease, others);
    holdSuspends();
    const cli = spawn(process.execPath, [BIN, 'run', PLAYBOOK, '--input', `account=${account}`], {
      env: { PATH: process.env.PATH ?? '', ...env(lease), FLEETBOOK_STATE: state },
      stdio: 'ignore',
    });
    const exited = new Promise((r) => cli.once('exit', r));
    await untilSuspendHeld();
    const [run] = runsIn(state, 'suspend-slowly');
    expect(run?.status).to.equal('running');
    cli.kill('SIGKILL');
    await exited;
    await releaseSuspends();
    await until(
      'the daemon to finish the run',
      () => runsIn(state, 'suspend-slowly')[0]?.status === 'succeeded',
    );
    expect(d.logs().some((l) => l.message === 'run resumed' && l.runId === run!.id)).to.equal(true);
    expect(
      d
        .logs()
        .some(
          (l) =>
            l.runId === run!.id &&
            l.message ===
              'the run goes on with the version of its playbook it was created with, not the one loaded now',
        ),
    ).to.equal(true);
    // A suspend the kill cut short may be sent again (its outcome was unknown), but no device is changed twice.
    const { devices } = await calls(emu);
    const twice = active.filter(
      (id) => (devices[id] ?? []).filter((m) => m.action === 'devices.suspend').length > 1,
    );
    const never = active.filter((id) => !(devices[id] ?? []).some((m) => m.action === 'devices.suspend'));
    expect(twice, 'devices suspended twice').to.deep.equal([]);
    expect(never, 'devices never suspended').to.deep.equal([]);
  });
});
