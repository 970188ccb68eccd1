/**
 * A daemon whose logins reach the count that stops them (four that may have failed, counted on the store by every
 * process on it) stopped logging in until it restarted, and said so only in each run's error. Now the count is
 * the store's: a restart does not forget it, the daemon's log says once that it stopped, `/status` says why until
 * it logs in again, and `fleetbook logins clear USER` lets it go on, with no restart. A real `fleetbook serve` (the
 * built binary) and real CLI processes on one state file, against an emulator over loopback whose `resetNext`
 * fault loses the answers of the logins.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { DaemonWorld, type DaemonProcess } from '../helpers/daemon.js';
import { calls, control, setFaults } from '../runner/helpers.js';

const PLAYBOOKS = join(import.meta.dirname, '..', 'fixtures', 'login-count');
const TOKEN = 'login-count-daemon-token-0';

interface Status {
  logins: {
    stopped?: string;
    counted: { service: string; username: string; failed: number; stopped: boolean }[];
  };
}

describe('daemon: logins stopped by the count on the store, and the way on (child processes)', function () {
  this.timeout(120_000);
  let world: DaemonWorld;

  before(async () => {
    world = await DaemonWorld.create('login-count', {
      user: 'lc-listener',
      password: 'lc-listener-password',
    });
  });
  after(() => world?.close());

  const manualRun = (daemon: DaemonProcess) =>
    daemon.manualRun('list-once', TOKEN, { account: world.emu.defaults.accounts[0]! });
  const stoppedLines = (d: DaemonProcess) => d.logs().filter((l) => l.message === 'session logins stopped');

  it('stops at the count a CLI left, says so once, and goes on once `fleetbook logins clear` is run', async () => {
    const state = world.state('stopped.db');
    const env = world.env({ FLEETBOOK_STATE: state, FLEETBOOK_DAEMON_TOKEN: TOKEN });
    // A cron'd `fleetbook call` whose logins lose their answers: 3 attempts, then 1 more.
    await setFaults(world.emu, { resetNext: { 'session.login': 4 } });
    const body = JSON.stringify({ accountName: world.emu.defaults.accounts[0]! });
    for (let i = 0; i < 2; i++) await fleetbook(['call', 'devices.list', '--body', body], env);
    expect((await calls(world.emu)).actions['session.login']).to.equal(4);

    const daemon = await world.start('login-count daemon', PLAYBOOKS, { state, env });
    const first = await manualRun(daemon);
    const second = await manualRun(daemon);
    for (const r of [first, second]) {
      expect(r.status).to.equal('failed');
      expect(JSON.stringify(r)).to.match(/not sending another session login as admin: 4 logins/);
    }
    expect((await calls(world.emu)).actions['session.login'], 'logins sent').to.equal(4);
    expect(stoppedLines(daemon), 'log lines saying the logins stopped').to.have.length(1);
    expect(String(stoppedLines(daemon)[0]!.error)).to.match(/fleetbook logins clear admin/);
    const status = await daemon.getJson<Status>('/status');
    expect(status.logins.stopped).to.match(/not sending another session login as admin/);
    expect(status.logins.counted.map((c) => [c.service, c.username, c.failed, c.stopped])).to.deep.equal([
      [world.emu.baseUrl, 'admin', 4, true],
    ]);

    const cleared = await fleetbook(['logins', 'clear', 'admin'], env);
    expect(cleared.code, cleared.stderr).to.equal(0);
    const after = await manualRun(daemon);
    expect(after.status, JSON.stringify(after)).to.equal('succeeded');
    expect((await calls(world.emu)).actions['session.login']).to.equal(5);
    expect(await daemon.getJson<Status>('/status')).to.deep.include({ logins: { counted: [] } });
    const users = (await control(world.emu, 'GET', '/accounts?devices=0')) as {
      users: { username: string; locked: boolean }[];
    };
    expect(users.users.find((u) => u.username === 'admin')!.locked).to.equal(false);
    await daemon.stop();
  });
});
