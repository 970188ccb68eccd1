/**
 * A daemon started while the service is unreachable registers its callback listener once the service is back,
 * without a restart (src/daemon/registrations.ts): `/status` and the gauge
 * `fleetbook_callback_registrations_failing` show each registration not in place meanwhile, with its error and
 * next attempt. A real `fleetbook serve` against an emulator over loopback, started on the daemon's service
 * address only after the daemon.
 */
import { freePort } from '../helpers/ports.js';
import { join } from 'node:path';
import { expect } from 'chai';
import { createClient } from '../../src/api/client.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { until } from '../helpers/browser.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess } from '../helpers/daemon.js';
import { tempDir } from '../helpers/temp.js';
import type { Registration } from '../../src/daemon/registrations.js';

const PLAYBOOKS = join(import.meta.dirname, '..', 'fixtures', 'console');

describe('fleetbook serve: callback registrations tried again until they are in place', function () {
  this.timeout(90_000);
  let emu: Emulator | undefined;
  let daemon: DaemonProcess | undefined;

  after(async () => {
    await daemon?.kill();
    await emu?.close();
  });

  it('registers its listener once the service it could not reach at start answers', async () => {
    const port = await freePort();
    const callbackPort = await freePort();
    // The service's address and credentials, as an emulator on that port will have them.
    const probe = await startEmulator({ port, timeScale: 0 });
    const env = emulatorEnv(probe);
    const account = probe.defaults.accounts[0] as string;
    await probe.close();

    daemon = await DaemonProcess.start('registration retry', {
      playbooks: PLAYBOOKS,
      state: join(tempDir('fleetbook-registration-'), 'state.db'),
      port: callbackPort,
      env: {
        ...env,
        FLEETBOOK_CALLBACK_USERNAME: 'fleetbook-registration',
        FLEETBOOK_CALLBACK_PASSWORD: 'registration-pass-5mQ2',
        FLEETBOOK_CALLBACK_ACCOUNTS: account,
        FLEETBOOK_CALLBACK_URL: `http://127.0.0.1:${callbackPort}`,
      },
    });
    const status = async () =>
      (await (await fetch(`${daemon?.url}/status`)).json()) as { registrations: Registration[] };
    const failing = async () => {
      const text = await (await fetch(`${daemon?.url}/metrics`)).text();
      return Number(/^fleetbook_callback_registrations_failing (\S+)$/m.exec(text)?.[1]);
    };

    const before = (await status()).registrations;
    expect(
      before.map((r) => [r.accountName, r.service, r.ok]),
      'each registration failed, with the service away',
    ).to.deep.equal([[account, 'DeviceUsage', false]]);
    for (const r of before) {
      // Once, or more on a machine slow enough to read /status past the first retry (10 s after).
      expect(r.attempts, 'attempts so far').to.be.at.least(1);
      expect(r.error, 'why it failed').to.be.a('string').and.not.equal('');
      expect(Date.parse(r.nextAttempt ?? ''), 'when it is tried again').to.be.greaterThan(Date.now() - 1000);
    }
    expect(await failing(), 'fleetbook_callback_registrations_failing').to.equal(1);

    // The service comes back: the next attempt registers, with no restart.
    emu = await startEmulator({ port, timeScale: 0 });
    const after = await until(
      'the registrations in place',
      async (seen) => {
        const { registrations } = await status();
        seen(JSON.stringify(registrations));
        return registrations.every((r) => r.ok) ? registrations : undefined;
      },
      60_000,
      500,
    );
    expect(after.map((r) => Object.keys(r).sort())).to.deep.equal([['accountName', 'ok', 'service', 'url']]);
    expect(await failing(), 'fleetbook_callback_registrations_failing').to.equal(0);
    const api = createClient({ ...emu.defaults, baseUrl: emu.baseUrl });
    try {
      const listed = (await api.callByName('callbacks.list', { accountName: account })) as { url: string }[];
      expect(listed.map((l) => l.url)).to.include(`http://127.0.0.1:${callbackPort}/callbacks/DeviceUsage`);
    } finally {
      await api.close();
    }
    expect(
      daemon.logs().filter((l) => l.message === 'callback listener registered after failing').length,
      'logged as it comes back',
    ).to.equal(1);
  });
});
