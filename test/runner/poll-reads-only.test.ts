/**
 * A wait's `poll` calls its action every interval until `until` holds, outside the checks of a step that
 * changes things: before, `poll: { uses: devices.suspend }` passed `validate`, and suspended its device five
 * times, in a dry run and with `limits: { maxDevices: 0 }`. `validate` now refuses a poll of anything but an
 * API read, at the line of its `uses`; a playbook that bypassed the loader fails the step before any call.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import { runPlaybook } from '../../src/runner/runner.js';
import { accountDevices, calls, clientFor, emulator, imei, memoryStore, playbook } from './helpers.js';

const pollOf = (uses: string, account = '0000123456-00001', device = '350260700638360') => `version: 1
name: poll-suspend
on: { manual: true }
limits: { maxDevices: 0 }
steps:
  - id: w
    wait:
      event: { service: Location, match: '\${{ false }}' }
      timeout: 5s
      poll:
        uses: ${uses}
        with: { accountName: '${account}', devices: [{ id: '${device}', kind: imei }] }
        until: '\${{ false }}'
        interval: 1s
`;

describe('a wait polls only what reads', () => {
  it('validate refuses a poll of an action that changes things, or of no API call, at its `uses`', () => {
    for (const [uses, message] of [
      [
        'devices.suspend',
        '`devices.suspend` changes things: a poll calls its action every interval until `until` holds, in a dry run too and past `limits`, so it can only read; make the change in a step before the wait',
      ],
      [
        'notify.webhook',
        '`notify.webhook` is no API call: a poll asks the service for something every interval until `until` holds',
      ],
    ] as const) {
      const { playbook: pb, diagnostics } = loadPlaybook(pollOf(uses), 'poll.yaml');
      expect(pb, uses).to.equal(undefined);
      expect(
        diagnostics.filter((d) => d.rule === 'poll').map((d) => [d.line, d.column, d.message]),
        uses,
      ).to.deep.equal([[11, 15, message]]);
    }
  });

  describe('at run time', function () {
    this.timeout(20_000);
    let emu: Emulator;
    let client: Client;

    before(async () => {
      emu = await emulator();
      client = clientFor(emu);
    });
    after(async () => {
      await client.close();
      await emu.close();
    });

    it('fails the step before any call when the playbook bypassed the loader', async () => {
      const account = emu.defaults.accounts[0] as string;
      const [device] = await accountDevices(emu, account, 1);
      // A valid poll (a read), then changed behind the loader's back.
      const pb = playbook(pollOf('devices.list', account, imei(device!)).replace(/devices: \[.*\] /, ''));
      const wait = (pb.steps[0] as { wait: { poll: { uses: string; with: unknown } } }).wait;
      wait.poll.uses = 'devices.suspend';
      wait.poll.with = { accountName: account, devices: [{ id: imei(device!), kind: 'imei' }] };
      const store = memoryStore();
      const before = (await calls(emu)).actions['devices.suspend'] ?? 0;
      const summary = await runPlaybook(pb, { client, store });
      await store.close();
      expect(summary.status).to.equal('failed');
      expect(summary.error).to.include('`devices.suspend` changes things');
      expect((await calls(emu)).actions['devices.suspend'] ?? 0).to.equal(before);
    });
  });
});
