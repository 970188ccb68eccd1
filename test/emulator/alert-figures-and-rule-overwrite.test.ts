/**
 * Two answers of the emulator that said less than the service's would.
 *
 * A price plan alert's `message` gave the usage rounded down to a whole unit, so that a device 0.4 MB over a 5 MB
 * threshold was "usage of 5 MB is gt the threshold of 5 MB": a figure equal to the threshold it is said to pass.
 * The message now gives the usage with the decimals it takes to tell it from the threshold ("5.4 MB"): the
 * figures here, the messages of real alerts in price-plan-alert-trigger-value.test.ts.
 *
 * `rules.overwrite` (spec 4.7: "It overwrites the existing rule", a rule of 2.11) dropped the rule's `deviceid`
 * when the body left it out. `deviceid` is the "Device UUID assigned at onboarding", the device the Smart Alert is
 * for, not a member of the rule's definition: an overwrite that does not name another device keeps it, as it keeps
 * the rule's id, creation time and account.
 */
import { expect } from 'chai';
import { figure } from '../../src/emulator/trigger-evaluation.js';
import { onWorld, type Json } from './helpers.js';

describe('emulator: the figures of an alert, and what a rule overwrite keeps', () => {
  const t = onWorld({ seed: 'alert-figures', devicesPerAccount: 300 });
  beforeEach(() => t.emu.reset({ seed: 'alert-figures', devicesPerAccount: 300 }));

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
