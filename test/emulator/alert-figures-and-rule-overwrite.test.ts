/**
 * Two answers of the emulator that said less than the service's would.
 *
 * A price plan alert's `message` gave the usage rounded down to a whole unit, so that a device 0.4 MB over a 5 MB
 * threshold was "usage of 5 MB is gt the threshold of 5 MB": a figure equal to the threshold it is said to pass.
 * The message now gives the usage with the decimals it takes to tell it from the threshold ("5.4 MB").
 *
 * `rules.overwrite` (spec 4.7: "It overwrites the existing rule", a rule of 2.11) dropped the rule's `deviceid`
 * when the body left it out. `deviceid` is the "Device UUID assigned at onboarding", the device the Smart Alert is
 * for, not a member of the rule's definition: an overwrite that does not name another device keeps it, as it keeps
 * the rule's id, creation time and account.
 */
import { expect } from 'chai';
import { figure } from '../../src/emulator/trigger-evaluation.js';
import { imeiOf, Listener, onWorld, type Json } from './helpers.js';
import { notification } from '../helpers/action-cases.js';

describe('emulator: the figures of an alert, and what a rule overwrite keeps', () => {
  const t = onWorld({ seed: 'alert-figures', devicesPerAccount: 300 });
  let listener: Listener;
  beforeEach(async () => {
    t.emu.reset({ seed: 'alert-figures', devicesPerAccount: 300 });
    listener = await new Listener().start();
    await t.client.callbacks.register({ accountName: t.account, name: 'DeviceUsage', url: listener.url });
  });
  afterEach(async () => {
    await t.emu.callbacksIdle();
    await listener.close();
  });

  it('gives a usage with the decimals that tell it from its threshold, cut, two at most', () => {
    expect(
      [
        [5.4, 5],
        [5.437, 5],
        [5.0004, 5],
        [31.7, 30],
        [5, 5],
        [4.99, 5],
      ].map(([v, th]) => figure(v!, th!)),
    ).to.deep.equal(['5.4', '5.4', 'just over 5', '31', '5', '4']);
  });

  it("a device alert's message gives its usage past the threshold, not rounded down to it", async () => {
    await t.client.triggers.createPayAsYouGo({
      triggerName: 'Over 30 KB a day',
      ecpdId: t.seed.profile.ecpdId,
      triggerCategory: 'PricePlanDataUsage',
      pricePlanTrigger: {
        payAsYouGo: {
          filterCriteria: { carrierServicePlanCode: t.seed.plans[0]!.code, accountNameList: [t.account] },
          condition: {
            conditionType: 'Individual',
            comparator: 'gt',
            threshold: 30,
            thresholdUnit: 'KB',
            cycleType: 'Daily',
          },
          action: {},
        },
      },
      notification: { ...notification, notificationFrequencyFactor: 0 },
      active: true,
    });
    t.emu.advance(86_400);
    await t.emu.callbacksIdle();
    const alerts = listener.received
      .map((r) => ((r.body.deviceResponse as Json).alertServiceResponse as Json).payAsYouGo as Json)
      .slice(0, 8);
    expect(alerts.length).to.be.greaterThan(0);
    const devices = t.seed.accounts[0]!.devices;
    const seen = new Set<string>();
    for (const a of alerts) {
      const message = String(a.message);
      const [, over, figure] =
        /usage of (just over )?(\d+(?:\.\d+)?) KB is gt the threshold of 30 KB/.exec(message) ?? [];
      expect(figure, message).to.be.a('string');
      seen.add(over ? 'just over' : 'figure');
      const id = ((a.deviceIds as Json[])[0] as { id: string }).id;
      const [used] = (
        await t.client.devices.usage({
          deviceId: imeiOf(devices.find((d) => imeiOf(d).id === id)!),
          earliest: '2026-01-05T00:00:00Z',
          latest: String(a.triggerDateTime),
        })
      ).usageHistory;
      const kb = used!.bytesUsed / 1024;
      if (over) {
        // Past the threshold by less than a hundredth of its unit: said so, not given as the threshold itself.
        expect(Number(figure), message).to.equal(30);
        expect(kb - 30, message).to.be.lessThan(0.01);
        continue;
      }
      // Past the threshold, as the alert says: never a figure equal to it, and the usage at the activation cut
      // (not rounded up) at the decimals given.
      expect(Number(figure), message).to.be.greaterThan(30);
      const unit = 10 ** -(figure!.split('.')[1]?.length ?? 0);
      expect(kb - Number(figure), message).to.be.within(-0.001, unit);
    }
    expect([...seen], 'the messages met').to.include('just over');
  });

  it("rules.overwrite keeps the rule's device when the body names none, and takes one it names", async () => {
    const rule = t.seed.accounts[0]!.rules[0]!;
    const overwrite = (sent: Json) =>
      t.client.rules.overwrite({
        accountname: t.account,
        resourceidentifier: { id: rule.id },
        rule: { name: 'Tilt alarm (40°)', rulesyntax: 'json', ...sent },
      }) as Promise<Json>;
    const first = await overwrite({ disabled: true });
    expect(first.deviceid, 'the device the seeded rule is for').to.be.a('string').and.not.equal('');
    expect(first).to.include({ name: 'Tilt alarm (40°)', disabled: true, id: rule.id });
    const other = '0b6e2f4a-5c1d-4e8f-9a7b-3c2d1e0f9a8b';
    expect(await overwrite({ deviceid: other })).to.include({ deviceid: other });
    const kept = await overwrite({ description: 'forty degrees' });
    expect(kept).to.include({ deviceid: other, description: 'forty degrees' });
    // An overwrite: what the body leaves out of the rule's own definition is gone.
    expect(kept).to.not.have.property('disabled');
  });
});
