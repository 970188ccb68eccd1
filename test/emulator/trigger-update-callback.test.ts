/**
 * Spec 4.1: an update of an account-group-share trigger answers `{ triggerId }` "and an asynchronous
 * callback", generated when `notification.callback` is true (spec 6). The emulator sent none. Now it sends the
 * DeviceUsage message its pay-as-you-go alerts use, `deviceResponse.alertServiceResponse`, with the
 * `accountShare` member spec 6 names for these triggers, to the listener of each account the trigger covers.
 */
import { expect } from 'chai';
import { toMessage } from '../../src/daemon/callbacks.js';
import { checkEvent } from '../../src/events/index.js';
import { Listener, onWorld, type Json } from './helpers.js';
import { notification } from '../helpers/action-cases.js';

describe('emulator: an account-group-share trigger update is called back', () => {
  const t = onWorld({ devicesPerAccount: 20 });
  let listener: Listener;
  beforeEach(async () => {
    t.emu.reset();
    listener = await new Listener().start();
    await t.client.callbacks.register({ accountName: t.account, name: 'DeviceUsage', url: listener.url });
  });
  afterEach(async () => {
    await t.emu.callbacksIdle();
    await listener.close();
  });

  async function update(callback: boolean): Promise<{ triggerId: string; accountGroupShare: Json }> {
    const { triggers } = await t.client.triggers.list({});
    const seeded = triggers.find((x) => x.triggerName === 'Share plan 80% notice')!;
    const accountGroupShare = {
      accountGroupSharePool: {
        filterCriteria: { ratePlanGroupId: t.seed.ratePlanGroups[0]!.id },
        condition: { action: 'notify' },
        action: { notify: { threshold: [{ percentage: { percentage90: true } }] } },
      },
    };
    const answer = await t.client.triggers.updateAccountGroupShare({
      triggerId: seeded.triggerId,
      triggerName: 'Pool at 90%',
      ecpdId: t.seed.profile.ecpdId,
      triggerCategory: 'PricePlanDataUsage',
      pricePlanTrigger: { accountGroupShare },
      notification: { ...notification, callback, notificationFrequencyFactor: 0, severity: 'Notice' },
      active: true,
    });
    expect(answer).to.deep.equal({ triggerId: seeded.triggerId });
    return { triggerId: seeded.triggerId, accountGroupShare };
  }

  it('sends the alert message with the trigger as updated, a valid DeviceUsage event', async () => {
    const { triggerId, accountGroupShare } = await update(true);
    await listener.waitFor(1);
    await t.emu.callbacksIdle();
    expect(listener.received).to.have.length(1);
    const event = toMessage('DeviceUsage', 'alertServiceResponse', listener.received[0]!.body, '')
      .payload as Json;
    expect(checkEvent('DeviceUsage', event)).to.deep.equal([]);
    expect(event.deviceResponse).to.deep.equal({
      alertServiceResponse: {
        triggerId,
        triggerName: 'Pool at 90%',
        triggerCategory: 'PricePlanDataUsage',
        accountName: t.account,
        accountShare: accountGroupShare,
      },
    });
  });

  it('sends nothing when notification.callback is false', async () => {
    await update(false);
    await t.emu.callbacksIdle();
    expect(listener.received).to.have.length(0);
  });
});
