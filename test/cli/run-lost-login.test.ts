/**
 * A lost answer does not fail a run the service would have served (measured in the field: a suspend of 510
 * devices under 20 % connection resets failed one run in five). The built binary against an emulator over
 * loopback, its `resetNext` fault losing the answers of chosen requests after the service acted:
 * - a login whose answer was lost is sent again (with backoff, a bounded number of times) and the run
 *   succeeds; a refused login is sent once, and the run fails with the refusal; logins whose answers were lost
 *   are counted across the logins a step's `retry:` starts, and stop before the lockout;
 * - a listing step whose requests outlast the client's own attempts is tried again as its `retry:` says.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { RunSummary } from '../../src/store/store.js';
import { emulatorEnv, fleetbook } from '../helpers/cli.js';
import { readState, runsIn } from '../helpers/daemon.js';
import { accountDevices, calls, control, imei, setFaults } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = join(import.meta.dirname, '..', 'fixtures', 'lost-login', 'list-devices.yaml');

/** One suspend, with no `retry:`: whatever the client does not mend fails it. */
const SUSPEND = `version: 1
name: suspend-one
on: { manual: true }
inputs:
  account: { type: string, required: true }
  imei: { type: string, required: true }
steps:
  - id: suspend
    uses: devices.suspend
    with:
      accountName: '\${{ inputs.account }}'
      devices: '\${{ [{"id": inputs.imei, "kind": "imei"}] }}'
    confirm: { timeout: 10s, pollInterval: 100ms }
`;

describe('fleetbook run: lost answers of the login and of a listing (child process)', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let tmp: string;
  let n = 0;

  before(async () => {
    emu = await startEmulator({ port: 0, timeScale: 0 });
    tmp = tempDir('fleetbook-run-lost-login-');
  });
  beforeEach(() => emu.reset());
  after(async () => {
    await emu?.close();
  });

  async function run(env: Record<string, string> = {}, playbook = PLAYBOOK, inputs: string[] = []) {
    const state = join(tmp, `state-${++n}.db`);
    const account = emu.defaults.accounts[0]!;
    const args = ['run', playbook, '--input', `account=${account}`, ...inputs.flatMap((i) => ['--input', i])];
    const res = await fleetbook(args, {
      ...emulatorEnv(emu),
      FLEETBOOK_STATE: state,
      ...env,
    });
    return { ...res, state };
  }

  async function activeImei(): Promise<string> {
    const devices = await accountDevices(emu, emu.defaults.accounts[0]!);
    return imei(devices.find((d) => d.state === 'active')!);
  }

  it('a login whose answer was lost twice is sent again, and the run succeeds', async () => {
    await setFaults(emu, { resetNext: { 'session.login': 2 } });
    const file = join(tmp, 'suspend-one.yaml');
    writeFileSync(file, SUSPEND);
    const device = await activeImei();
    const res = await run({}, file, [`imei=${device}`]);
    expect(res.code, res.stderr).to.equal(0);
    // Two logins acted and lost their answers; the third answered.
    const seen = await calls(emu);
    expect(seen.actions['session.login']).to.equal(3);
    expect(seen.actions['devices.suspend']).to.equal(1);
    expect(runsIn(res.state, 'suspend-one').map((r) => r.status)).to.deep.equal(['succeeded']);
    expect(outcomes(res.state)).to.deep.equal([[device, 'succeeded', null]]);
  });

  it('a login whose answers were all lost: the suspend never left, and the ledger says so', async () => {
    // Every attempt of the client's login is lost: the step (no `retry:`) fails, its request unsent.
    await setFaults(emu, { resetNext: { 'session.login': 3 } });
    const file = join(tmp, 'suspend-one.yaml');
    writeFileSync(file, SUSPEND);
    const device = await activeImei();
    const res = await run({}, file, [`imei=${device}`]);
    expect(res.code).to.not.equal(0);
    expect(res.stderr).to.match(/session\.login: other side closed/);
    const seen = await calls(emu);
    expect(seen.actions['session.login']).to.equal(3);
    expect(seen.actions['devices.suspend'] ?? 0).to.equal(0);
    // Not `unconfirmed` (OUTCOME UNKNOWN), which would say the service may have suspended it.
    expect(outcomes(res.state)).to.deep.equal([[device, 'failed', 'NETWORK']]);
  });

  it('a refused login is sent once, and the run fails saying why', async () => {
    await setFaults(emu, { resetNext: { 'devices.list': 1 } });
    const res = await run({ FLEETBOOK_PASSWORD: 'not-the-password-4321' });
    expect(res.code).to.not.equal(0);
    expect(res.stderr).to.match(/session login as admin was refused: HTTP 401/);
    const seen = await calls(emu);
    expect(seen.actions['session.login']).to.equal(1);
    expect(seen.actions['devices.list'] ?? 0).to.equal(0);
  });

  it('a wrong password whose refusals are all lost: the step retries, and the user is never locked', async () => {
    // Each login the step's attempts start is sent again while its answers are lost: counted across them, the
    // client stops before the fifth failed login that locks the user, and the run says why.
    await setFaults(emu, { resetNext: { 'session.login': 50 } });
    const res = await run({ FLEETBOOK_PASSWORD: 'not-the-password-4321' });
    expect(res.code).to.not.equal(0);
    expect(res.stderr).to.match(/not sending another session login as admin: 4 logins/);
    expect(res.stderr).to.match(/five consecutive failed logins lock the user/);
    const seen = await calls(emu);
    expect(seen.actions['session.login']).to.equal(4);
    expect(seen.actions['devices.list'] ?? 0).to.equal(0);
    const world = (await control(emu, 'GET', '/accounts?devices=0')) as {
      users: { username: string; locked: boolean }[];
    };
    expect(world.users.find((u) => u.username === 'admin')!.locked, 'admin locked').to.equal(false);
  });

  it('a listing whose answers outlast the client retries is tried again as its retry says', async () => {
    // The client sends a read up to 5 times: every one of them is lost, and the step's second attempt answers.
    await setFaults(emu, { resetNext: { 'devices.list': 5 } });
    const res = await run();
    expect(res.code, res.stderr).to.equal(0);
    const seen = await calls(emu);
    expect(seen.actions['devices.list']).to.equal(6);
    expect(seen.actions['session.login']).to.equal(1);
    const runId = runsIn(res.state, 'list-devices')[0]!.id;
    const shown = await fleetbook(['runs', 'show', runId, '--json'], { FLEETBOOK_STATE: res.state });
    const step = (JSON.parse(shown.stdout) as RunSummary).steps[0]!;
    expect([step.id, step.status, step.attempts]).to.deep.equal(['devices', 'succeeded', 2]);
  });
});

function outcomes(state: string): [string, string, string | null][] {
  return readState(state, (db) =>
    (
      db.prepare('SELECT device_id, outcome, error_type FROM device_results').all() as {
        device_id: string;
        outcome: string;
        error_type: string | null;
      }[]
    ).map((r) => [r.device_id, r.outcome, r.error_type]),
  );
}
