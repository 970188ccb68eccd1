/**
 * Spec 2.10: a set-configuration answer's `fields` is "with deviceConfig", so `configuration.deviceConfig.ble`
 * comes back as `fields.deviceConfig.ble`, and the sensor's record (2.6) shows it there too. It used to come
 * back as `fields.deviceConfig.deviceConfig.ble`. The tilt form's settings go in the same `deviceConfig`.
 */
import { expect } from 'chai';
import { onWorld, type Json } from './helpers.js';

describe('emulator: set configuration nests deviceConfig once', () => {
  const t = onWorld({ seed: 'set-configuration', devicesPerAccount: 80 });
  const ble = { reportPeriod: 600, scanDuration: 30, moreManufId: [76] };
  const tilt = { mode: 'periodic', 'hold-time': 500, 'angle-away': 30 };

  const devices = () => t.seed.accounts[0]!.devices;
  const fieldsOf = (out: { actionresult: Json[] }) => {
    const [result] = out.actionresult;
    expect(result!.state).to.equal('success');
    return result!.fields as Json;
  };
  const recordFields = async (resourceidentifier: Json) =>
    ((await t.client.sensors.query({ accountname: t.account, resourceidentifier })) as Json).fields as Json;

  it('answers and keeps a BLE sensor configuration under fields.deviceConfig.ble', async () => {
    const sensor = devices().find((d) => d.type === 'gateway')!.bleSensors![0]!;
    const answer = await t.raw.api('POST', '/dm/v1/devices/actions/set', {
      accountname: t.account,
      configuration: { deviceConfig: { ble } },
      resourceidentifier: { deveui: sensor.deveui },
    });
    expect(answer.status).to.equal(200);
    expect(fieldsOf(answer.body as { actionresult: Json[] })).to.deep.equal({ deviceConfig: { ble } });
    expect(await recordFields({ deveui: sensor.deveui })).to.deep.equal({
      deveui: sensor.deveui,
      deviceConfig: { ble },
    });
  });

  it('answers and keeps a tilt configuration under fields.deviceConfig.HighPrecisionTiltConfig', async () => {
    const sensor = devices().find((d) => d.type === 'sensor')!;
    const out = await t.client.sensors.setConfiguration({
      accountName: t.account,
      configuration: { HighPrecisionTiltConfig: tilt },
      resourceidentifier: { id: sensor.uuid! },
    });
    expect(fieldsOf(out as { actionresult: Json[] })).to.deep.equal({
      deviceConfig: { HighPrecisionTiltConfig: tilt },
    });
    expect(await recordFields({ id: sensor.uuid! })).to.deep.equal({
      deviceConfig: { HighPrecisionTiltConfig: tilt },
    });
  });
});
