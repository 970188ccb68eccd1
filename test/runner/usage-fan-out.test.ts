/**
 * The shipped group usage check (playbooks/group-usage-check.yaml), run against the emulator: `devices.usage`
 * is the history of one device, so the playbook reads each device of the group in a forEach step, and warns
 * of exactly the devices whose usage passed the daily limit on some day, as the emulator answers it.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { runPlaybook } from '../../src/runner/runner.js';
import { captureLogger, clientFor, emulatorClock, onEmulator, playbook, spy, type Json } from './helpers.js';

const EXAMPLE = fileURLToPath(new URL('../../playbooks/group-usage-check.yaml', import.meta.url));
const LIMIT = 20_000_000;

describe('devices.usage in a forEach: the group usage check', function () {
  this.timeout(60_000);
  const t = onEmulator({ devicesPerAccount: 120 });

  it('reads each active device of the group, one per call, and warns of those over the daily limit', async () => {
    const account = t.account;
    const sent = spy(t.client);
    const logger = captureLogger();
    const summary = await runPlaybook(playbook(await readFile(EXAMPLE, 'utf8'), EXAMPLE), {
      client: t.client,
      store: t.store,
      inputs: { account, group: 'North Fleet', dailyLimitBytes: LIMIT },
      clock: emulatorClock(t.emu),
      logger,
    });
    expect(summary.status, summary.error).to.equal('succeeded');

    // The group's active devices, as a second client lists them (the listing step pages outside callByName).
    const reader = clientFor(t.emu);
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
    const date = new Date(t.emu.now()).toISOString();
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
