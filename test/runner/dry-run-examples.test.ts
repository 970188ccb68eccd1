/**
 * The dry run of every example playbook of playbooks/ succeeds (issue 18): a manual one with its inputs, a
 * callback one with the example event of its service. A dry run makes the read-only calls and none of the
 * mutating ones, whose outputs it makes up from their output schemas, so that later steps can read them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { eventExample } from '../../src/events/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { Playbook } from '../../src/playbook/schema.js';
import { accountDevices, calls, onEmulator, playbook, type SeedDevice } from './helpers.js';

const DIR = join(import.meta.dirname, '..', '..', 'playbooks');
const EXAMPLES = readdirSync(DIR)
  .filter((f) => f.endsWith('.yaml') && !f.endsWith('.test.yaml'))
  .sort();

/** The inputs of the examples that have required inputs without a default; sensors are the world's. */
function inputsOf(name: string, sensors: string[]): Record<string, unknown> {
  const inputs: Record<string, Record<string, unknown>> = {
    'cleanup-stale-usage-triggers': { triggerIds: ['6c3fd2a1-0b1e-4b8e-9d0a-2f3c4d5e6f70'] },
    'onboard-managed-accounts': { accounts: ['0000123456-00002'] },
    'rollout-sensor-configuration': { sensors },
  };
  return inputs[name] ?? {};
}

/** The callback services of a playbook's `on.callback`. */
function services(pb: Playbook): string[] {
  const cb = pb.on.callback;
  return (cb === undefined ? [] : Array.isArray(cb) ? cb : [cb]).map((c) => c.service);
}

describe('dry run of every example playbook', function () {
  this.timeout(30_000);
  const t = onEmulator({ accounts: 3, devicesPerAccount: 20 });
  let sensors: string[];

  before(async () => {
    const devices = (await accountDevices(t.emu, t.account)) as (SeedDevice & { uuid?: string })[];
    sensors = devices.filter((d) => d.type === 'sensor' && d.uuid).map((d) => d.uuid as string);
    expect(sensors.length, 'sensors in the world').to.be.greaterThan(1);
  });

  it('has examples, manual and callback ones', () => {
    const pbs = EXAMPLES.map((f) => playbook(readFileSync(join(DIR, f), 'utf8'), f));
    expect(pbs.filter((pb) => pb.on.manual).length).to.be.greaterThan(4);
    expect(pbs.filter((pb) => services(pb).length).length).to.be.greaterThan(1);
  });

  for (const file of EXAMPLES) {
    it(`${file}: succeeds, and changes nothing`, async () => {
      const pb = playbook(readFileSync(join(DIR, file), 'utf8'), `playbooks/${file}`);
      const [service] = services(pb);
      const before = await calls(t.emu);
      const s = await runPlaybook(pb, {
        client: t.client,
        store: t.store,
        dryRun: true,
        inputs: inputsOf(pb.name, sensors),
        ...(!pb.on.manual && service ? { event: eventExample(service) } : {}),
      });
      expect(s.status, s.error).to.equal('succeeded');
      expect(s.dryRun).to.equal(true);
      // Nothing mutated: no device has a mutation it did not have before.
      expect((await calls(t.emu)).devices).to.deep.equal(before.devices);
    });
  }
});
