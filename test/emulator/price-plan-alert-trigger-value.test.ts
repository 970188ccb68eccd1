/**
 * Spec 6: a pay-as-you-go alert's `triggerValue` is the "Value at which the trigger activates, set by the
 * threshold". The emulator used to put the usage there, and in a device's message the usage at the evaluation
 * that found the activation, so that one alert said 31 and "usage of 62 KB". Now `triggerValue` is the
 * threshold, in `thresholdUnit`, and the message says the usage at `triggerDateTime`.
 */
import { expect } from 'chai';
import { imeiOf, Listener, onWorld, type Json } from './helpers.js';
import { notification } from '../helpers/action-cases.js';

describe('emulator: a price plan alert carries its threshold as triggerValue', () => {
  const t = onWorld({ seed: 'trigger-value', devicesPerAccount: 300 });
  let listener: Listener;
  beforeEach(async () => {
    t.emu.reset({ seed: 'trigger-value', devicesPerAccount: 300 });
    listener = await new Listener().start();
    await t.client.callbacks.register({ accountName: t.account, name: 'DeviceUsage', url: listener.url });
  });
  afterEach(async () => {
    await t.emu.callbacksIdle();
    await listener.close();
  });

  /** The alerts of a 30 KB a day trigger of `conditionType`, after one evaluation at midnight. */
  async function alertsOf(conditionType: 'Individual' | 'AccountLevel'): Promise<Json[]> {
    await t.client.triggers.createPayAsYouGo({
      triggerName: 'Over 30 KB a day',
      ecpdId: t.seed.profile.ecpdId,
      triggerCategory: 'PricePlanDataUsage',
      pricePlanTrigger: {
        payAsYouGo: {
          filterCriteria: { carrierServicePlanCode: t.seed.plans[0]!.code, accountNameList: [t.account] },
          condition: {
            conditionType,
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
    const alerts = listener.received.map(
      (r) => ((r.body.deviceResponse as Json).alertServiceResponse as Json).payAsYouGo as Json,
    );
    expect(alerts.length).to.be.greaterThan(0);
    for (const a of alerts) expect(a).to.include({ triggerValue: 30, threshold: 30, thresholdUnit: 'KB' });
    return alerts;
  }

  it('a device alert: the message gives the usage at the activation, past the threshold, not rounded down to it', async () => {
    const devices = t.seed.accounts[0]!.devices;
    const seen = new Set<string>();
    for (const a of (await alertsOf('Individual')).slice(0, 8)) {
      expect(String(a.triggerDateTime)).to.match(/^2026-01-05T/);
      const message = String(a.message);
      const [, over, figure] =
        /usage of (just over )?(\d+(?:\.\d+)?) KB is gt the threshold of 30 KB/.exec(message) ?? [];
      expect(figure, message).to.be.a('string');
      seen.add(over ? 'just over' : 'figure');
      const id = ((a.deviceIds as Json[])[0] as { id: string }).id;
      const [untilActivation] = (
        await t.client.devices.usage({
          deviceId: imeiOf(devices.find((d) => imeiOf(d).id === id)!),
          earliest: '2026-01-05T00:00:00Z',
          latest: String(a.triggerDateTime),
        })
      ).usageHistory;
      const kb = untilActivation!.bytesUsed / 1024;
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

  it('an account alert: the usage, far over the threshold, is in the message only', async () => {
    const [a] = await alertsOf('AccountLevel');
    expect(Number(/usage of (\d+(?:\.\d+)?) KB/.exec(String(a!.message))?.[1])).to.be.greaterThan(30);
  });
});
