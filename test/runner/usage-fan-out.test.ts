/**
 * The shipped group usage check (playbooks/group-usage-check.yaml), run against the emulator: `devices.usage`
 * is the history of one device, so the playbook reads each device of the group in a forEach step, and warns
 * of exactly the devices whose usage passed the daily limit on some day, as the emulator answers it.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import {
  captureLogger,
  clientFor,
  emulator,
  emulatorClock,
  memoryStore,
  playbook,
  spy,
  type Json,
} from './helpers.js';

const EXAMPLE = fileURLToPath(new URL('../../playbooks/group-usage-check.yaml', import.meta.url));
const LIMIT = 20_000_000;

describe('devices.usage in a forEach: the group usage check', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 120 });
    client = clientFor(emu);
    store = memoryStore();
  });
  after(async () => {
    store.close();
    await client.close();
    await emu.close();
  });

  it('reads each active device of the group, one per call, and warns of those over the daily limit', async () => {
    const account = emu.defaults.accounts[0]!;
    const sent = spy(client);
    const logger = captureLogger();
    const summary = await runPlaybook(playbook(await readFile(EXAMPLE, 'utf8'), EXAMPLE), {
      client,
      store,
      inputs: { account, group: 'North Fleet', dailyLimitBytes: LIMIT },
      clock: emulatorClock(emu),
      logger,
    });
    expect(summary.status, summary.error).to.equal('succeeded');

    // The group's active devices, as a second client lists them (the listing step pages outside callByName).
    const reader = clientFor(emu);
    const { devices } = await reader.devices.list({
      accountName: account,
      groupName: 'North Fleet',
      currentState: 'active',
    });
    await reader.close();
    expect(devices.length).to.be.greaterThan(3);

    const usage = sent.filter((c) => c.action === 'devices.usage');
    expect(usage.map((c) => (c.input.deviceId as Json).id).sort()).to.deep.equal(
      devices.map((d) => d.deviceIds[0]!.id).sort(),
    );
    const date = new Date(emu.now()).toISOString();
    for (const c of usage) {
      expect(Object.keys(c.input)).to.deep.equal(['deviceId', 'earliest', 'latest']);
      expect(c.input.earliest).to.equal(`${date.slice(0, 8)}01T00:00:00Z`);
    }

    const over = usage
      .filter((c) =>
        (c.output as { usageHistory: { bytesUsed: number }[] }).usageHistory.some((u) => u.bytesUsed > LIMIT),
      )
      .map((c) => (c.input.deviceId as Json).id);
    expect(over.length, 'some devices, not all, are over the limit')
      .to.be.greaterThan(0)
      .and.lessThan(usage.length);
    const warned = logger.lines.filter((l) => l.level === 'warn').map((l) => l.meta.deviceId);
    expect(warned.sort()).to.deep.equal(over.sort());
  });
});
