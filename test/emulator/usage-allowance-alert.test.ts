/**
 * Spec 6: an alert's `threshold` is "Threshold in units" and its `thresholdUnit` one of KB, MB, GB, TB. A
 * UsageAllowance alert used to carry the level as `threshold: 75, thresholdUnit: '%'`, which the DeviceUsage
 * event schema refuses. Now the threshold is the level's share of the plan pool in the condition's unit, and
 * the message gives the usage and that threshold in the same unit.
 */
import { expect } from 'chai';
import { toMessage } from '../../src/daemon/callbacks.js';
import { checkEvent } from '../../src/events/index.js';
import { Listener, onWorld, type Json } from './helpers.js';
import { notification } from '../helpers/action-cases.js';

describe('emulator: a UsageAllowance alert is a valid DeviceUsage event', () => {
  const t = onWorld({ seed: 'usage-allowance', devicesPerAccount: 100 });
  let listener: Listener;
  before(async () => {
    listener = await new Listener().start();
    await t.client.callbacks.register({ accountName: t.account, name: 'DeviceUsage', url: listener.url });
  });
  after(async () => {
    await t.emu.callbacksIdle();
    await listener.close();
  });

  it('gives the threshold in MB, and the message says the same', async () => {
    await t.client.triggers.createPayAsYouGo({
      triggerName: 'Pool levels',
      ecpdId: t.seed.profile.ecpdId,
      triggerCategory: 'PricePlanDataUsage',
      pricePlanTrigger: {
        payAsYouGo: {
          filterCriteria: { carrierServicePlanCode: t.seed.plans[0]!.code, accountNameList: [t.account] },
          condition: {
            conditionType: 'UsageAllowance',
            thresholdUnit: 'MB',
            percentage50: true,
            percentage75: true,
            percentage90: true,
            percentage100: true,
          },
          action: {},
        },
      },
      notification: { ...notification, notificationFrequencyFactor: 0 },
      active: true,
    });
    t.emu.advance(31 * 86_400);
    await t.emu.callbacksIdle();
    expect(listener.received.length).to.be.greaterThan(0);
    for (const { body } of listener.received) {
      // The event as the daemon stores it for a playbook: without the envelope's credentials and counters.
      const event = toMessage('DeviceUsage', 'alertServiceResponse', body, '').payload as Json;
      expect(checkEvent('DeviceUsage', event)).to.deep.equal([]);
      const alert = ((event.deviceResponse as Json).alertServiceResponse as Json).payAsYouGo as Json;
      expect(alert.thresholdUnit).to.equal('MB');
      expect(alert.triggerValue).to.equal(alert.threshold);
      const m = /usage of (\d+) MB reached (\d+)% of .* pool allowance, (\d+) MB$/.exec(
        String(alert.message),
      );
      expect(m, String(alert.message)).to.not.equal(null);
      expect(Number(m![3])).to.equal(alert.threshold);
      expect(Number(m![1])).to.be.at.least(Number(alert.threshold));
    }
  });
});
