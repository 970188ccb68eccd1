/**
 * A device identifier with a NUL character (U+0000), which PostgreSQL's text cannot hold and SQLite's can: refused
 * where it enters, the same on both stores. On PostgreSQL, a run given one failed its step with the server's
 * `unsupported Unicode escape sequence` and recorded none of its devices (on SQLite, the device was recorded
 * failed, FB_INPUT), and a callback naming one was stored with U+FFFD in its place. Daemon processes (dist/ must be
 * built) on a SQLite file and on a PostgreSQL database, with the emulator.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess } from '../helpers/daemon.js';
import { postgresUrl } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOKS = join(import.meta.dirname, '..', 'fixtures', 'nul-device');
const TOKEN = 'nul-device-daemon-token-0123456789';
const CALLBACK = { username: 'nul-listener', password: 'nul-listener-password' };
const NUL_ID = '35000000000\u00001234';

describe('daemon: a device id with a NUL character (SQLite and PostgreSQL)', function () {
  this.timeout(90_000);
  let emu: Emulator;
  let tmp: string;
  before(async () => {
    emu = await startEmulator({ port: 0, timeScale: 0, seed: 1, accounts: 1, devicesPerAccount: 3 });
    tmp = tempDir('fleetbook-nul-device-ids-');
  });
  after(async () => {
    await emu?.close();
  });

  for (const backend of ['sqlite', 'postgres'] as const)
    it(`${backend}: refuses it in a run's devices and in a callback, before anything is stored`, async () => {
      const state = backend === 'postgres' ? await postgresUrl() : join(tmp, 'state.db');
      const daemon = await DaemonProcess.start(backend, {
        playbooks: PLAYBOOKS,
        state,
        env: {
          ...emulatorEnv(emu),
          FLEETBOOK_DAEMON_TOKEN: TOKEN,
          FLEETBOOK_CALLBACK_USERNAME: CALLBACK.username,
          FLEETBOOK_CALLBACK_PASSWORD: CALLBACK.password,
          FLEETBOOK_LOG_LEVEL: 'warn',
        },
      });
      try {
        const headers = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };
        const devices = [
          { id: '350000000001234', kind: 'imei' },
          { id: NUL_ID, kind: 'imei' },
        ];
        const runId = await daemon.startRun('suspend-given', TOKEN, {
          account: emu.defaults.accounts[0],
          devices,
        });
        let run: { status: string; error?: string; devices: { total: number } } | undefined;
        for (;;) {
          const res = await fetch(`${daemon.url}/runs/${runId}`, { headers });
          run = (await res.json()) as typeof run;
          if (run && run.status !== 'queued' && run.status !== 'running') break;
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(run?.status).to.equal('failed');
        expect(run?.error).to.equal(
          'step `suspend` failed: devices.suspend: invalid input\n  /devices/1/id: the identifier "35000000000\\u00001234" has a NUL character (U+0000): no device\'s has one, and the PostgreSQL store cannot keep one; nothing was sent',
        );
        // Nothing was sent, nor recorded: the same on both stores.
        expect(run?.devices.total).to.equal(0);

        const callback = (body: object) =>
          fetch(`${daemon.url}/callbacks/CarrierService`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              ...CALLBACK,
              deviceResponse: { suspendResponse: {} },
              status: 'Success',
              ...body,
            }),
          });
        const byDevice = await callback({ requestId: 'req-1', deviceIds: [{ id: NUL_ID, kind: 'imei' }] });
        expect(byDevice.status).to.equal(400);
        expect(await byDevice.text()).to.include(
          'deviceIds/0/id has a NUL character (U+0000): no device identifier has one, and the PostgreSQL store cannot keep one',
        );
        const byRequest = await callback({
          requestId: 'req-\u00002',
          deviceIds: [{ id: '1', kind: 'imei' }],
        });
        expect(byRequest.status).to.equal(400);
        expect(await byRequest.text()).to.include(
          'requestId has a NUL character (U+0000): no request id has one, and the PostgreSQL store cannot keep one',
        );
        // A callback without one is stored as before.
        const fine = await callback({
          requestId: 'req-3',
          deviceIds: [{ id: '350000000001234', kind: 'imei' }],
        });
        expect(fine.status, await fine.clone().text()).to.equal(200);
      } finally {
        await daemon.kill();
      }
    });
});
