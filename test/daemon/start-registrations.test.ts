/**
 * `fleetbook serve` registering its callback listener for several accounts at start, the built binary in a child
 * process against an emulator of this process over loopback.
 *
 * - The registrations (accounts × services) are made at once, within the API area's budget, not one after the
 *   other: a start on a slow service took accounts × services round trips (5 accounts, 3 services, 300 ms each:
 *   about 6 s; 20 accounts: about 20 s).
 * - `/readyz` answers 503 until the start is over, saying what it waits for; it answered 200 throughout, while no
 *   callback was registered yet. A registration that failed and is tried again later ends the wait: `/readyz`
 *   answers 200, and `/status` lists it with its error and next attempt.
 * - With a service other than the embedded emulator, no `FLEETBOOK_CALLBACK_URL` and a wildcard listen address
 *   (0.0.0.0), the daemon registers `http://0.0.0.0:PORT`, which the service cannot reach: it says so, naming
 *   `FLEETBOOK_CALLBACK_URL`. Before, it said nothing.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { DaemonProcess, DaemonWorld, untilDaemons } from '../helpers/daemon.js';
import type { Registration } from '../../src/daemon/registrations.js';

const ON = (name: string, service: string) => `version: 1
name: ${name}
on: { callback: { service: ${service} } }
steps:
  - id: say
    uses: log
    with: { message: '${name}' }
`;

interface Readiness {
  status: string;
  waitingFor?: string;
  registrations?: { made: number; failed: number; of: number };
  registrationsFailing?: number;
}

describe('fleetbook serve: callback registrations at start (child process)', function () {
  this.timeout(120_000);
  let world: DaemonWorld;
  let playbooks: string;
  before(async () => {
    world = await DaemonWorld.create('start-registrations', {
      user: 'start-registrations',
      password: 'start-registrations-pass-7Qx',
    });
    playbooks = join(world.dir, 'playbooks');
    await mkdir(playbooks);
    await writeFile(join(playbooks, 'on-usage.yaml'), ON('on-usage', 'DeviceUsage'));
    await writeFile(join(playbooks, 'on-sms.yaml'), ON('on-sms', 'EnhancedConnectivityService'));
  });
  after(() => world.close());

  it('registers every account and service at once, and is not ready until they are made', async () => {
    const accounts = world.emu.defaults.accounts.slice(0, 3);
    expect(accounts, 'the emulator accounts').to.have.length(3);
    // Every registration held at the service until released: what the daemon sends at once is what is held.
    const hold = world.emu.hold('callbacks.register');
    const d = DaemonProcess.spawn('held daemon', {
      playbooks,
      state: world.state('held.db'),
      env: world.env({
        FLEETBOOK_CALLBACK_URL: 'http://127.0.0.1:9',
        FLEETBOOK_CALLBACK_ACCOUNTS: accounts.join(','),
      }),
    });
    try {
      const url = await untilDaemons([], 'the daemon listening', async () => {
        const m = /"message":"listening".*?"url":"(http:[^"]+)"/.exec(d.stderr);
        return m?.[1];
      });
      const readyz = async () => {
        const res = await fetch(`${url}/readyz`);
        return { status: res.status, body: (await res.json()) as Readiness };
      };
      // Before: 200 `{"status":"ready"}` from the moment it listened, with nothing registered.
      expect((await readyz()).status, '/readyz as the daemon begins to listen').to.equal(503);
      // Six registrations (3 accounts × 2 services) under way together: before, one at a time, the first held
      // the others back and the service never saw a second.
      await untilDaemons([], 'the six registrations at the service at once', async () =>
        hold.held === 6 ? true : undefined,
      );
      expect(await readyz(), '/readyz while the registrations are under way').to.deep.equal({
        status: 503,
        body: {
          status: 'starting',
          waitingFor: 'callback registrations',
          registrations: { made: 0, failed: 0, of: 6 },
        },
      });
      expect(d.stderr, 'the start not over').to.not.include('fleetbook serve: listening on');
      hold.release();
      await untilDaemons([], 'the start over', async () =>
        d.stderr.includes('fleetbook serve: listening on') ? true : undefined,
      );
      expect(await readyz(), '/readyz once the start is over').to.deep.equal({
        status: 200,
        body: { status: 'ready' },
      });
      d.proc.kill('SIGTERM');
      expect(await d.exited, d.stderr).to.deep.equal({ code: 0, signal: null });
    } finally {
      hold.release();
      d.proc.kill('SIGKILL');
    }
  });

  it('is ready once a registration failed and waits to be tried again, which /status lists', async () => {
    // An account of the right form that the service does not have: its registrations are refused.
    const missing = '0000999999-00001';
    const account = world.emu.defaults.accounts[0] as string;
    const d = await world.start('one refused', playbooks, {
      state: world.state('refused.db'),
      env: {
        FLEETBOOK_CALLBACK_URL: 'http://127.0.0.1:9',
        FLEETBOOK_CALLBACK_ACCOUNTS: `${account},${missing}`,
      },
    });
    const res = await fetch(`${d.url}/readyz`);
    expect({ status: res.status, body: (await res.json()) as Readiness }).to.deep.equal({
      status: 200,
      body: { status: 'ready', registrationsFailing: 2 },
    });
    const { registrations } = await d.getJson<{ registrations: Registration[] }>('/status');
    const failing = registrations.filter((r) => !r.ok);
    expect(
      failing.map((r) => [r.accountName, r.service]).sort(),
      'the refused registrations in /status',
    ).to.deep.equal([
      [missing, 'DeviceUsage'],
      [missing, 'EnhancedConnectivityService'],
    ]);
    for (const r of failing) {
      expect(r.error, 'why it failed').to.be.a('string').and.not.equal('');
      expect(Number.isNaN(Date.parse(r.nextAttempt ?? '')), 'when it is tried again: no time').to.equal(
        false,
      );
    }
    await d.stop();
  });

  const wildcardWarning = (d: DaemonProcess) =>
    d.logs().filter((l) => l.level === 'warn' && String(l.message).includes('FLEETBOOK_CALLBACK_URL'));

  it('warns that a wildcard listen address is no address for the service when FLEETBOOK_CALLBACK_URL is unset', async () => {
    const d = await DaemonProcess.start('wildcard', {
      playbooks,
      state: world.state('wildcard.db'),
      host: '0.0.0.0',
      env: world.env({ FLEETBOOK_CALLBACK_ACCOUNTS: world.emu.defaults.accounts[0] as string }),
    });
    try {
      const warnings = wildcardWarning(d);
      expect(warnings, d.stderr).to.have.length(1);
      expect(warnings[0]?.message).to.match(/0\.0\.0\.0/);
      expect(warnings[0]?.message).to.match(/set FLEETBOOK_CALLBACK_URL/);
    } finally {
      await d.stop();
    }
  });

  it('says so when its playbooks take callbacks and FLEETBOOK_CALLBACK_ACCOUNTS names no account to register', async () => {
    const d = await DaemonProcess.start('no accounts', {
      playbooks,
      state: world.state('no-accounts.db'),
      env: world.env(),
    });
    try {
      const said = d.logs().filter((l) => String(l.message).includes('no callback listener is registered'));
      expect(said, d.stderr).to.have.length(1);
      expect(said[0]?.message).to.include('FLEETBOOK_CALLBACK_ACCOUNTS');
      expect(said[0]?.services).to.be.an('array').with.length.greaterThan(0);
      expect(await d.getJson<{ registrations: unknown[] }>('/status')).to.deep.include({ registrations: [] });
    } finally {
      await d.stop();
    }
  });

  it('does not warn when FLEETBOOK_CALLBACK_URL is set, or the daemon listens on loopback', async () => {
    const set = await DaemonProcess.start('wildcard, URL set', {
      playbooks,
      state: world.state('wildcard-set.db'),
      host: '0.0.0.0',
      env: world.env({
        FLEETBOOK_CALLBACK_ACCOUNTS: world.emu.defaults.accounts[0] as string,
        FLEETBOOK_CALLBACK_URL: 'http://127.0.0.1:9',
      }),
    });
    await set.stop();
    const loopback = await DaemonProcess.start('loopback', {
      playbooks,
      state: world.state('loopback.db'),
      env: world.env({ FLEETBOOK_CALLBACK_ACCOUNTS: world.emu.defaults.accounts[0] as string }),
    });
    await loopback.stop();
    expect([wildcardWarning(set), wildcardWarning(loopback)]).to.deep.equal([[], []]);
  });
});
