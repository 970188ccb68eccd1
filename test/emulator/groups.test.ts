/**
 * Device groups over loopback: a device is in one group at a time, as devices.list shows it; a group's devices
 * page by the `next` token; renames and deletes move devices; what the service refuses changes nothing.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { GROUP_PAGE } from '../../src/emulator/groups.js';
import { clientFor, emulator, idOf, Raw, refusal, world, type AccountView } from './helpers.js';

describe('emulator: device groups', () => {
  let emu: Emulator;
  let client: Client;
  let raw: Raw;
  let acc: AccountView;
  const imei = (i: number) => ({ id: idOf(acc.devices[i]!, 'imei'), kind: 'imei' });

  before(async () => {
    emu = await emulator({ seed: 'groups', devicesPerAccount: 600 });
    client = clientFor(emu);
    raw = new Raw(emu);
  });
  beforeEach(async () => {
    emu.reset({ seed: 'groups', devicesPerAccount: 600 });
    acc = (await world(raw)).accounts[0]!;
  });
  after(async () => {
    await client.close();
    await emu.close();
  });

  const groupOf = async (i: number) =>
    (await client.devices.list({ accountName: acc.accountName })).devices.find(
      (d) => d.deviceIds[0]!.id === imei(i).id,
    )!.groupNames;

  it('lists the seeded groups, the default first, and a created one with its devices', async () => {
    const seeded = await client.groups.list({ accountName: acc.accountName });
    expect(seeded.map((g) => [g.name, g.isDefaultGroup])).to.deep.equal([
      ['Default', true],
      ['North Fleet', false],
      ['South Fleet', false],
      ['Depot Sensors', false],
      ['Field Service', false],
    ]);
    await client.groups.create({
      accountName: acc.accountName,
      groupName: 'Cold chain',
      groupDescription: 'Refrigerated trailers',
      devicesToAdd: [imei(0), { id: idOf(acc.devices[1]!, 'iccid'), kind: 'ICCID' }],
    });
    const g = await client.groups.get({ accountName: acc.accountName, groupName: 'Cold chain' });
    expect(g.description).to.equal('Refrigerated trailers');
    expect(g.devices.map((d) => d.deviceIds[0]!.id)).to.deep.equal([imei(0).id, imei(1).id]);
    // A device is in one group: it left its seeded group, and devices.list says so.
    expect(await groupOf(0)).to.deep.equal(['Cold chain']);
    expect(
      (await client.devices.list({ accountName: acc.accountName, groupName: 'Cold chain' })).devices,
    ).to.have.length(2);
  });

  it("pages a group's devices by the next token of the Location header", async () => {
    const r = await raw.api('GET', `/m2m/v1/groups/${acc.accountName}/name/North%20Fleet`);
    expect(r.status).to.equal(202);
    expect(r.headers.location).to.equal(
      `/api/m2m/v1/groups/${acc.accountName}/name/North%20Fleet?next=${GROUP_PAGE}`,
    );
    expect((r.body as { devices: unknown[] }).devices).to.have.length(GROUP_PAGE);
    const all = await client.groups.get({ accountName: acc.accountName, groupName: 'North Fleet' });
    const listed = await client.devices.list({ accountName: acc.accountName, groupName: 'North Fleet' });
    expect(all.devices.length).to.be.greaterThan(GROUP_PAGE);
    expect(all.devices.map((d) => d.deviceIds[0]!.id)).to.deep.equal(
      listed.devices.map((d) => d.deviceIds[0]!.id),
    );
  });

  it('renames a group with its devices, moves removed devices to Default, and deletes into Default', async () => {
    await client.groups.create({
      accountName: acc.accountName,
      groupName: 'A',
      groupDescription: 'a',
      devicesToAdd: [imei(0), imei(1), imei(2)],
    });
    await client.groups.update({
      accountName: acc.accountName,
      groupName: 'A',
      newGroupName: 'B',
      newGroupDescription: 'b',
      devicesToRemove: [imei(1), imei(3)],
    });
    const b = await client.groups.get({ accountName: acc.accountName, groupName: 'B' });
    expect([b.name, b.description]).to.deep.equal(['B', 'b']);
    expect(b.devices.map((d) => d.deviceIds[0]!.id)).to.deep.equal([imei(0).id, imei(2).id]);
    expect(await groupOf(1)).to.deep.equal(['Default']);
    // imei(3) was not in the group: it stays where it was.
    expect(await groupOf(3)).to.not.deep.equal(['Default']);
    await client.groups.delete({ accountName: acc.accountName, groupName: 'B' });
    expect(await groupOf(0)).to.deep.equal(['Default']);
    expect((await client.groups.list({ accountName: acc.accountName })).map((g) => g.name)).to.not.include(
      'B',
    );
    // Every device moved is a mutation the control API shows.
    const calls = (await raw.control('GET', `/calls?device=${imei(0).id}`)).body as {
      devices: Record<string, { action: string }[]>;
    };
    expect(Object.values(calls.devices)[0]!.map((m) => m.action)).to.deep.equal([
      'groups.create',
      'groups.update',
      'groups.delete',
    ]);
  });

  it('refuses, and changes nothing for, an unknown group, a taken name, the default group, and a foreign device', async () => {
    const other = (await world(raw)).accounts[1]!;
    const cases: [Promise<unknown>, string][] = [
      [
        client.groups.get({ accountName: acc.accountName, groupName: 'Nope' }),
        'Device group not found: Nope',
      ],
      [
        client.groups.create({
          accountName: acc.accountName,
          groupName: 'North Fleet',
          groupDescription: '',
        }),
        'Device group already exists: North Fleet',
      ],
      [
        client.groups.update({
          accountName: acc.accountName,
          groupName: 'North Fleet',
          newGroupName: 'South Fleet',
        }),
        'Device group already exists: South Fleet',
      ],
      [
        client.groups.update({ accountName: acc.accountName, groupName: 'Default', newGroupName: 'Other' }),
        'The default device group cannot be renamed',
      ],
      [
        client.groups.delete({ accountName: acc.accountName, groupName: 'Default' }),
        'The default device group cannot be deleted',
      ],
      [
        client.groups.create({
          accountName: acc.accountName,
          groupName: 'Mixed',
          groupDescription: '',
          devicesToAdd: [imei(0), { id: idOf(other.devices[0]!, 'imei'), kind: 'imei' }],
        }),
        `Device imei ${idOf(other.devices[0]!, 'imei')} does not belong to account ${acc.accountName}`,
      ],
    ];
    for (const [call, message] of cases)
      expect(await refusal(call)).to.deep.equal([400, 'INVALID_PARAMETER', message]);
    expect((await client.groups.list({ accountName: acc.accountName })).map((g) => g.name)).to.not.include(
      'Mixed',
    );
    expect(await groupOf(0)).to.not.deep.equal(['Mixed']);
  });

  it('refuses a user without access to the account (401 INVALID_ACCESS)', async () => {
    const field = clientFor(emu, { username: 'field', password: 'field-password' });
    try {
      const e = await refusal(field.groups.list({ accountName: acc.accountName }));
      expect(e.slice(0, 2)).to.deep.equal([401, 'INVALID_ACCESS']);
    } finally {
      await field.close();
    }
  });
});
