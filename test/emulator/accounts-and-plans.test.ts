/**
 * What an account is, over loopback: its information, its states and services, and its service plans, whose
 * codes are what activation and plan changes take.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { clientFor, emulator, idOf, Raw, refusal, world, type World } from './helpers.js';

describe('emulator: accounts and service plans', () => {
  let emu: Emulator;
  let client: Client;
  let w: World;

  before(async () => {
    emu = await emulator({ seed: 'plans', devicesPerAccount: 30 });
    client = clientFor(emu);
    w = await world(new Raw(emu));
  });
  after(async () => {
    await client.close();
    await emu.close();
  });

  it('a plan code from plans.list is what devices.changePlan takes', async () => {
    const acc = w.accounts[0]!;
    const plans = await client.plans.list({ accountName: acc.accountName });
    expect(plans.map((p) => [p.code, p.name])).to.deep.equal(w.plans.map((p) => [p.code, p.name]));
    expect(plans[1]!.sizeKb).to.equal(1024 * 1024);
    const d = acc.devices.find((x) => x.state === 'active' && x.servicePlan !== plans[1]!.code)!;
    await client.devices.changePlan({
      accountName: acc.accountName,
      devices: [{ id: idOf(d, 'imei'), kind: 'imei' }],
      servicePlan: plans[1]!.code!,
    });
    const listed = await client.devices.list({ accountName: acc.accountName, servicePlan: plans[1]!.code! });
    expect(listed.devices.map((x) => x.deviceIds[0]!.id)).to.include(idOf(d, 'imei'));
  });

  it('account information: its plans, and the Location feature only where the account is registered', async () => {
    const [primary, , outside] = w.accounts;
    const info = await client.accounts.get({ accountName: primary!.accountName });
    expect(info).to.deep.include({
      accountName: primary!.accountName,
      organizationName: (w.profile as { organizationName?: string }).organizationName,
      features: ['SMS', 'Location'],
      isProvisioningAllowed: true,
    });
    expect(info.servicePlans!.map((p) => p.code)).to.deep.equal(w.plans.map((p) => p.code));
    expect((await client.accounts.get({ accountName: outside!.accountName })).features).to.deep.equal([
      'SMS',
    ]);
  });

  it('states and services: the workflow of the states, every plan usable while active', async () => {
    const s = await client.accounts.statesAndServices({ accountName: w.accounts[0]!.accountName });
    const states = s.engagement[0]!.services![0]!.states!;
    expect(states.map((x) => [x.name, x.workflowSequenceNumber])).to.deep.equal([
      ['Pending', 1],
      ['Active', 2],
      ['Suspended', 3],
      ['Deactivated', 4],
    ]);
    expect(states[1]!.servicePlans).to.deep.equal(w.plans.map((p) => p.code));
  });

  it('refuses an unknown account and an account the user cannot see', async () => {
    expect(await refusal(client.plans.list({ accountName: '0000000000-00009' }))).to.deep.equal([
      400,
      'INVALID_PARAMETER',
      'UWS verification failure (Could not find account 0000000000-00009)',
    ]);
    const field = clientFor(emu, { username: 'field', password: 'field-password' });
    try {
      expect(
        (await refusal(field.accounts.get({ accountName: w.accounts[0]!.accountName })))!.slice(0, 2),
      ).to.deep.equal([401, 'INVALID_ACCESS']);
    } finally {
      await field.close();
    }
  });
});
