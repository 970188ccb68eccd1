/**
 * Answers whose shape the spec's field tables give, as the emulator sends them over loopback.
 *
 * - Spec 2.13 (5G device attribute lookup): `deviceIds` are objects with `kind` `imei`, `imsi` or `iccid`. The
 *   emulator answered the listing record, with the MDN, MSISDN, MEID and ESN as well.
 * - Spec 2.9 (device profile): the profile's `configuration.reportingInterval`, which only the request example
 *   spells `resportingInterval`. The emulator answered the request spelling.
 */
import { expect } from 'chai';
import { idOf, onWorld, type Json } from './helpers.js';

describe('emulator: answers the spec field tables give', function () {
  this.timeout(30_000);
  const t = onWorld({ seed: 'attribute-and-profile', devicesPerAccount: 8 });

  it('a 5G device attribute lookup lists its imei, imsi and iccid only (spec 2.13)', async () => {
    const device = t.seed.accounts[0]!.devices[0]!;
    const iccid = idOf(device, 'iccid');
    const r = await t.raw.api('POST', '/m2m/v1/devices/actions/list', {
      deviceId: { id: iccid, kind: 'iccid' },
    });
    expect(r.status).to.equal(200);
    const ids = ((r.body as Json).devices as Json[])[0]!.deviceIds as { id: string; kind: string }[];
    expect(ids).to.deep.equal([
      { id: idOf(device, 'imei'), kind: 'imei' },
      { id: iccid, kind: 'iccid' },
      { id: idOf(device, 'imsi'), kind: 'imsi' },
    ]);
  });

  it('a device listing still names every identifier of a device', async () => {
    const r = await t.raw.api('POST', '/m2m/v1/devices/actions/list', {
      accountName: t.account,
      maxNumberOfDevices: 1,
    });
    const kinds = (((r.body as Json).devices as Json[])[0]!.deviceIds as { kind: string }[]).map(
      (d) => d.kind,
    );
    expect(kinds).to.include.members(['imei', 'iccid', 'mdn', 'msisdn', 'imsi']);
  });

  it('a device profile answers configuration.reportingInterval, whichever spelling was sent (spec 2.9)', async () => {
    const [seeded, other] = t.seed.accounts[0]!.profiles as { id: string }[];
    const r = await t.raw.api('PATCH', '/dm/v1/deviceConfigurationProfiles', {
      accountname: t.account,
      profiles: [
        { id: seeded!.id, configuration: { resportingInterval: 12 } },
        { id: other!.id, name: 'renamed' },
      ],
    });
    expect(r.status).to.equal(200);
    const [changed, kept] = r.body as Json[];
    expect(changed!.configuration).to.deep.equal({ randomInt: 1, reportingInterval: 12 });
    expect(kept!.configuration).to.deep.equal({ randomInt: 1, reportingInterval: 24 });
    const viaClient = await t.client.callByName('deviceProfiles.update', {
      accountname: t.account,
      profiles: { id: seeded!.id, configuration: { reportingInterval: 6 } },
    });
    expect((viaClient as Json[])[0]!.configuration).to.deep.equal({ randomInt: 1, reportingInterval: 6 });
  });
});
