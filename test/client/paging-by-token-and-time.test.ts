/**
 * Listings that continue by the `?next=` token of the answer's `Location` header (SMS history, a group's
 * devices; spec 4.5) and by the last item's time (connection history; spec section 8): the exact requests the
 * client sends for every page, and the one result it makes of them.
 */
import { expect } from 'chai';

import { onRecorder } from '../helpers/recorder.js';

const ACC = '0000123456-00001';
const IMEI = '353456789012345';

describe('client: paging by token and by time', () => {
  const t = onRecorder({ each: true });

  const sms = (n: number) => ({
    deviceIds: [{ id: IMEI, kind: 'imei' }],
    message: `m${n}`,
    timestamp: `2026-01-0${n}T00:00:00.000Z`,
  });

  it('sms.history follows the next token of each 202 answer, and ends at the 200', async () => {
    const path = `/api/m2m/v1/sms/${ACC}/history`;
    t.rec.enqueue(
      `GET ${path}`,
      {
        status: 202,
        headers: { location: `${path}?next=2` },
        body: { hasMoreData: true, messages: [sms(1), sms(2)] },
      },
      {
        status: 202,
        headers: { location: `${path}?next=3` },
        body: { hasMoreData: true, messages: [sms(3)] },
      },
      { status: 200, body: { hasMoreData: false, messages: [sms(4)] } },
    );
    const out = await t.client.sms.history({ accountName: ACC });
    expect(t.rec.apiRequests().map((r) => `${r.method} ${r.url} ${r.rawBody}`)).to.deep.equal([
      `GET ${path} `,
      `GET ${path}?next=2 `,
      `GET ${path}?next=3 `,
    ]);
    expect(out).to.deep.equal({ messages: [sms(1), sms(2), sms(3), sms(4)] });
  });

  it('groups.get keeps the group and gathers its devices from every page', async () => {
    const path = `/api/m2m/v1/groups/${ACC}/name/North%20Fleet`;
    const device = (id: string) => ({
      accountName: ACC,
      carrierInformations: [],
      deviceIds: [{ id, kind: 'imei' }],
    });
    t.rec.enqueue(
      `GET ${path}`,
      {
        status: 202,
        headers: { location: `https://service.example${path}?next=100` },
        body: { name: 'North Fleet', description: 'Trucks', hasMoreData: true, devices: [device('1')] },
      },
      { body: { name: 'North Fleet', description: 'Trucks', hasMoreData: false, devices: [device('2')] } },
    );
    const out = await t.client.groups.get({ accountName: ACC, groupName: 'North Fleet' });
    expect(t.rec.apiRequests().map((r) => r.url)).to.deep.equal([path, `${path}?next=100`]);
    expect(out).to.deep.equal({
      name: 'North Fleet',
      description: 'Trucks',
      devices: [device('1'), device('2')],
    });
  });

  it('a page that says there is more but gives no token ends the listing', async () => {
    const path = `/api/m2m/v1/sms/${ACC}/history`;
    t.rec.enqueue(`GET ${path}`, { status: 202, body: { hasMoreData: true, messages: [sms(1)] } });
    const out = await t.client.sms.history({ accountName: ACC });
    expect(t.rec.apiRequests()).to.have.length(1);
    expect(out).to.deep.equal({ messages: [sms(1)] });
  });

  it('devices.connectionHistory asks again from the last event time, and drops the events it already has', async () => {
    const path = '/api/m2m/v1/devices/connections/actions/listHistory';
    const ev = (at: string, event: string) => ({
      occurredAt: at,
      connectionEventAttributes: [{ key: 'Event', value: event }],
    });
    const t1 = '2026-01-01T01:00:00.000Z';
    const t2 = '2026-01-01T02:00:00.000Z';
    const t3 = '2026-01-01T03:00:00.000Z';
    t.rec.enqueue(
      `POST ${path}`,
      {
        status: 202,
        body: { hasMoreData: true, connectionHistory: [ev(t1, 'Start'), ev(t2, 'Stop'), ev(t2, 'Start')] },
      },
      { body: { hasMoreData: false, connectionHistory: [ev(t2, 'Stop'), ev(t2, 'Start'), ev(t3, 'Stop')] } },
    );
    const out = await t.client.devices.connectionHistory({
      deviceId: { id: IMEI, kind: 'IMEI' },
      earliest: '2026-01-01T00:00:00Z',
      latest: '2026-01-02T00:00:00Z',
    });
    expect(t.rec.apiRequests().map((r) => r.rawBody)).to.deep.equal([
      JSON.stringify({
        deviceId: { id: IMEI, kind: 'imei' },
        earliest: '2026-01-01T00:00:00Z',
        latest: '2026-01-02T00:00:00Z',
      }),
      JSON.stringify({ deviceId: { id: IMEI, kind: 'imei' }, earliest: t2, latest: '2026-01-02T00:00:00Z' }),
    ]);
    expect(out).to.deep.equal({
      connectionHistory: [ev(t1, 'Start'), ev(t2, 'Stop'), ev(t2, 'Start'), ev(t3, 'Stop')],
    });
  });
});
