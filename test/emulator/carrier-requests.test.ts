/**
 * The carrier's asynchronous requests: what it did to each device is recorded, reported per device in
 * CarrierService callbacks, summed up by the request-status operation, and readable by tests through
 * `emu.request()` and `GET /_emulator/requests`. Processing time, and the faults that make the carrier never
 * finish a device or drop a callback, move on the simulated clock and are seeded.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import { CARRIER_ERRORS, deviceErrorClass } from '../../src/api/device-errors.js';
import { kindOf, toMessage } from '../../src/daemon/callbacks.js';
import type { Emulator, RequestRecord } from '../../src/emulator/index.js';
import { CarrierRequest, KEEP_REQUEST_DEVICES, RequestLog } from '../../src/emulator/requests.js';
import {
  type AccountView,
  clientFor,
  emulator,
  idOf,
  imeiOf,
  type Json,
  Listener,
  Raw,
  sleep,
  world,
} from './helpers.js';

type Device = AccountView['devices'][number];

describe('emulator: asynchronous requests, per device', () => {
  let emu: Emulator;
  let raw: Raw;
  let client: Client;
  let primary: AccountView;
  let second: AccountView;
  let listener: Listener;

  before(async () => {
    emu = await emulator({ seed: 'carrier-requests', devicesPerAccount: 400 });
    raw = new Raw(emu);
    client = clientFor(emu);
    const w = await world(raw);
    primary = w.accounts[0]!;
    second = w.accounts[1]!;
  });

  beforeEach(async () => {
    emu.reset();
    listener = await new Listener().start();
    await client.callbacks.register({
      accountName: primary.accountName,
      name: 'CarrierService',
      url: listener.url,
      username: 'hook-user',
      password: 'hook-pass',
    });
  });

  afterEach(async () => {
    emu.setFaults({});
    await emu.callbacksIdle();
    await listener.close();
  });

  after(async () => {
    await client.close();
    await emu.close();
  });

  const inState = (state: string, count = 1, skip = 0) => {
    const found = primary.devices.filter((d) => d.state === state).slice(skip, skip + count);
    if (found.length < count) throw new Error(`not ${count} ${state} devices in the seed`);
    return found;
  };
  const stateOf = async (d: Device) => {
    const r = await client.devices.attributes({ deviceId: { id: idOf(d, 'iccid'), kind: 'iccid' } });
    return r.devices[0]!.carrierInformations[0]!.state;
  };
  /** The request-status operation over raw HTTP, logged in afresh (resets and clock jumps end sessions). */
  const status = (requestId: string, accountName = primary.accountName, as?: string) => {
    raw.forget();
    return raw.api('GET', `/m2m/v1/accounts/${accountName}/requests/${requestId}/status`, undefined, as);
  };
  /** The callbacks received for a request, by the device's first identifier. */
  const callbacksOf = (requestId: string) =>
    new Map(
      listener.received
        .map((r) => r.body)
        .filter((b) => b.requestId === requestId)
        .map((b) => [(b.deviceIds as { id: string }[])[0]!.id, b]),
    );

  it('records each device of a suspend of active, suspended, pending and deactive devices, and calls back per device', async () => {
    const [active] = inState('active');
    const [suspended] = inState('suspend');
    const [pending] = inState('pending');
    const [deactive] = inState('deactive');
    const devices = [active!, suspended!, pending!, deactive!];
    const { requestId } = await client.devices.suspend({
      accountName: primary.accountName,
      devices: devices.map(imeiOf),
    });

    const record = emu.request(requestId)!;
    expect(record).to.deep.include({
      requestId,
      action: 'devices.suspend',
      accountName: primary.accountName,
      receivedAt: '2026-01-05T00:00:00.000Z',
      status: 'PartialSuccess',
      completedAt: '2026-01-05T00:00:00.000Z',
    });
    expect(record.devices).to.deep.equal([
      { deviceIds: [imeiOf(active!)], status: 'Success' },
      // Already in the target state: done, nothing to do.
      { deviceIds: [imeiOf(suspended!)], status: 'Success' },
      {
        deviceIds: [imeiOf(pending!)],
        status: 'Failed',
        reason: {
          code: 'INVALID DEVICE STATE',
          message: 'Only an active device can be suspended; the device is pending',
        },
      },
      {
        deviceIds: [imeiOf(deactive!)],
        status: 'Failed',
        reason: {
          code: 'DEVICE DEACTIVATED',
          message: 'Only an active device can be suspended; the device is deactive',
        },
      },
    ]);
    expect(await stateOf(active!)).to.equal('suspend');
    expect(await stateOf(pending!)).to.equal('pending');

    // The control API shows the same record.
    const shown = (await raw.control('GET', `/requests?requestId=${requestId}`)).body as Json;
    expect(shown).to.deep.equal({ requests: [record] });

    // One callback per device, with the device's outcome.
    await listener.waitFor(4);
    const got = callbacksOf(requestId);
    expect(got.size).to.equal(4);
    const first = got.get(idOf(active!, 'imei'))!;
    expect(Object.keys(first)).to.deep.equal([
      'username',
      'password',
      'requestId',
      'deviceIds',
      'deviceResponse',
      'status',
      'callbackCount',
      'maxCallbackThreshold',
    ]);
    expect(first).to.deep.equal({
      username: 'hook-user',
      password: 'hook-pass',
      requestId,
      deviceIds: [imeiOf(active!)],
      deviceResponse: { suspendResponse: { accountName: primary.accountName } },
      status: 'Success',
      callbackCount: 1,
      maxCallbackThreshold: 4,
    });
    const refused = got.get(idOf(deactive!, 'imei'))!;
    expect(Object.keys(refused)).to.deep.equal([
      'username',
      'password',
      'requestId',
      'deviceIds',
      'deviceResponse',
      'status',
      'faultResponse',
      'callbackCount',
      'maxCallbackThreshold',
    ]);
    expect(refused.faultResponse).to.deep.equal({
      faultcode: 'DEVICE DEACTIVATED',
      faultstring: 'Only an active device can be suspended; the device is deactive',
    });
    // Every callback agrees with the record.
    for (const d of record.devices) {
      const cb = got.get(d.deviceIds[0]!.id)!;
      expect(cb.status, d.deviceIds[0]!.id).to.equal(d.status);
      expect(cb.faultResponse).to.deep.equal(
        d.reason ? { faultcode: d.reason.code, faultstring: d.reason.message } : undefined,
      );
    }
    // A listener that deduplicates on requestId, kind and device (the daemon's inbox) keeps all four.
    const keys = [...got.values()].map((b) => {
      const m = toMessage('CarrierService', kindOf(b)!, b, '');
      return `${m.requestId} ${m.kind} ${m.device}`;
    });
    expect(new Set(keys).size).to.equal(4);

    const answer = await status(requestId);
    expect([answer.status, answer.body]).to.deep.equal([200, { requestId, status: 'PartialSuccess' }]);
  });

  it('answers the request status: Success, Failure (as the real service spells it) or PartialSuccess once finished', async () => {
    const [a, b] = inState('active', 2);
    const one = await client.devices.suspend({ accountName: primary.accountName, devices: [imeiOf(a!)] });
    expect(
      await client.requests.status({ accountName: primary.accountName, requestId: one.requestId }),
    ).to.deep.equal({ requestId: one.requestId, status: 'Success' });
    const failed = await client.devices.restore({
      accountName: primary.accountName,
      devices: inState('pending', 2).map(imeiOf),
    });
    expect(
      (await client.requests.status({ accountName: primary.accountName, requestId: failed.requestId }))
        .status,
    ).to.equal('Failure');
    const partial = await client.devices.changePlan({
      accountName: primary.accountName,
      devices: [imeiOf(b!), ...inState('deactive').map(imeiOf)],
      servicePlan: primary.devices[0]!.servicePlan,
    });
    expect(
      (await client.requests.status({ accountName: primary.accountName, requestId: partial.requestId }))
        .status,
    ).to.equal('PartialSuccess');
    expect(emu.request(partial.requestId)!.devices[1]!.reason!.code).to.equal('DEVICE DEACTIVATED');
  });

  it('records SMS requests too, and sends no callback for them', async () => {
    const devices = primary.devices.slice(0, 3).map(imeiOf);
    const { requestId } = await client.sms.send({
      accountName: primary.accountName,
      deviceIds: devices,
      smsMessage: 'reboot',
    });
    const record = emu.request(requestId)!;
    expect(record.action).to.equal('sms.send');
    expect(record.status).to.equal('Success');
    expect(record.devices.map((d) => d.deviceIds)).to.deep.equal(devices.map((d) => [d]));
    await emu.callbacksIdle();
    await sleep(50);
    expect(callbacksOf(requestId).size).to.equal(0);
  });

  it('keeps the identifiers a device was named by, whichever they are', async () => {
    const [a] = inState('active');
    const named = [
      { id: idOf(a!, 'iccid'), kind: 'iccid' },
      { id: idOf(a!, 'imei'), kind: 'imei' },
    ];
    const [s] = inState('suspend');
    const { requestId } = await client.devices.restore({
      accountName: primary.accountName,
      devices: [{ deviceIds: named }, { id: idOf(s!, 'mdn'), kind: 'MDN' }],
    });
    expect(emu.request(requestId)!.devices.map((d) => d.deviceIds)).to.deep.equal([
      named,
      [{ id: idOf(s!, 'mdn'), kind: 'mdn' }],
    ]);
    await listener.waitFor(2);
    expect([...callbacksOf(requestId).values()].map((b) => b.deviceIds)).to.have.deep.members([
      named,
      [{ id: idOf(s!, 'mdn'), kind: 'mdn' }],
    ]);
  });

  describe('processing time', () => {
    it('leaves the request Pending and the devices unchanged until processingSeconds have passed', async () => {
      const set = await raw.control('PUT', '/faults', { processingSeconds: 60 });
      expect((set.body as Json).processingSeconds).to.equal(60);
      const [a, b] = inState('active', 2);
      const { requestId } = await client.devices.suspend({
        accountName: primary.accountName,
        devices: [imeiOf(a!), imeiOf(b!)],
      });
      expect((await status(requestId)).body).to.deep.equal({ requestId, status: 'Pending' });
      expect(emu.request(requestId)!.devices.map((d) => d.status)).to.deep.equal(['Pending', 'Pending']);
      expect(emu.request(requestId)!.completedAt).to.equal(undefined);
      emu.advance(59);
      expect((await status(requestId)).body).to.deep.equal({ requestId, status: 'Pending' });
      expect(await stateOf(a!)).to.equal('active');
      await emu.callbacksIdle();
      await sleep(50);
      expect(listener.received).to.have.length(0);
      const calls = (await raw.control('GET', `/calls?device=${idOf(a!, 'imei')}`)).body as Json;
      expect(calls.devices).to.deep.equal({ [idOf(a!, 'imei')]: [] });

      emu.advance(1);
      expect((await status(requestId)).body).to.deep.equal({ requestId, status: 'Success' });
      expect(await stateOf(a!)).to.equal('suspend');
      expect(emu.request(requestId)!.completedAt).to.equal('2026-01-05T00:01:00.000Z');
      await listener.waitFor(2);
      expect(listener.received.map((r) => r.body.status)).to.deep.equal(['Success', 'Success']);
      // The mutation is dated when the carrier carried it out.
      const after = (await raw.control('GET', `/calls?device=${idOf(a!, 'imei')}`)).body as {
        devices: Record<string, Json[]>;
      };
      expect(after.devices[idOf(a!, 'imei')]).to.deep.equal([
        { action: 'devices.suspend', at: '2026-01-05T00:01:00.000Z', requestId },
      ]);
      // The counts without the devices' lists (a 100,000-device suspend's are megabytes), or with the first few.
      const all = (await raw.control('GET', '/calls')).body as { actions: Json; devices: Json };
      expect(Object.keys(all.devices)).to.have.length(2);
      expect((await raw.control('GET', '/calls?devices=0')).body).to.deep.equal({
        actions: all.actions,
        devices: {},
      });
      const first = (await raw.control('GET', '/calls?devices=1')).body as { devices: Json };
      expect(first.devices).to.deep.equal({ [idOf(a!, 'imei')]: all.devices[idOf(a!, 'imei')] });
      for (const [path, error] of [
        ['/calls?devices=some', 'devices must be an integer from 0 up'],
        [`/calls?device=${idOf(a!, 'imei')}&devices=0`, 'give device or devices, not both'],
      ]) {
        const r = await raw.send('GET', `/_emulator${path}`);
        expect([r.status, r.body], path).to.deep.equal([400, { error }]);
      }
    });

    it('is judged against the device state when carried out, in the order the requests are due', async () => {
      emu.setFaults({ processingSeconds: 30 });
      const [a] = inState('active');
      const first = await client.devices.suspend({ accountName: primary.accountName, devices: [imeiOf(a!)] });
      emu.advance(10);
      const second = await client.devices.restore({
        accountName: primary.accountName,
        devices: [imeiOf(a!)],
      });
      emu.advance(30);
      expect((await status(first.requestId)).body).to.include({ status: 'Success' });
      expect((await status(second.requestId)).body).to.include({ status: 'Success' });
      expect(await stateOf(a!)).to.equal('active');
    });

    it('can be given at start', async () => {
      const slow = await emulator({ seed: 'carrier-requests', faults: { processingSeconds: 5 } });
      const c = clientFor(slow);
      try {
        const p = (await new Raw(slow).control('GET', '/accounts?devices=50')).body as {
          accounts: AccountView[];
        };
        const d = p.accounts[0]!.devices.find((x) => x.state === 'active')!;
        const { requestId } = await c.devices.suspend({
          accountName: p.accounts[0]!.accountName,
          devices: [imeiOf(d)],
        });
        expect(slow.request(requestId)!.status).to.equal('Pending');
        slow.advance(5);
        expect(slow.request(requestId)!.status).to.equal('Success');
      } finally {
        await c.close();
        await slow.close();
      }
    });
  });

  describe('faults', () => {
    it('neverFinishDevices: those devices stay Pending forever, unchanged, with no callback', async () => {
      const [a, b] = inState('active', 2);
      // Any identifier of the device names it.
      emu.setFaults({ neverFinishDevices: [idOf(a!, 'iccid')] });
      const { requestId } = await client.devices.suspend({
        accountName: primary.accountName,
        devices: [imeiOf(a!), imeiOf(b!)],
      });
      emu.advance(7 * 86_400);
      const record = emu.request(requestId)!;
      expect(record.status).to.equal('Pending');
      expect(record.devices.map((d) => d.status)).to.deep.equal(['Pending', 'Success']);
      expect((await status(requestId)).body).to.deep.equal({ requestId, status: 'Pending' });
      expect(await stateOf(a!)).to.equal('active');
      expect(await stateOf(b!)).to.equal('suspend');
      await listener.waitFor(1);
      await emu.callbacksIdle();
      await sleep(50);
      expect([...callbacksOf(requestId).keys()]).to.deep.equal([idOf(b!, 'imei')]);
    });

    it('neverFinishRate: a seeded share of devices never finishes, the same each time', async () => {
      const devices = inState('active', 60).map(imeiOf);
      const pendingOf = async () => {
        emu.reset();
        emu.setFaults({ neverFinishRate: 0.5 });
        const { requestId } = await client.devices.suspend({ accountName: primary.accountName, devices });
        return emu
          .request(requestId)!
          .devices.filter((d) => d.status === 'Pending')
          .map((d) => d.deviceIds[0]!.id);
      };
      const once = await pendingOf();
      expect(once.length).to.be.within(15, 45);
      expect(await pendingOf()).to.deep.equal(once);
      expect((await raw.control('GET', '/requests?limit=1')).body).to.have.nested.property(
        'requests[0].status',
        'Pending',
      );
    });

    it('dropCallbackRate: the device is done and recorded, but no callback is sent', async () => {
      emu.setFaults({ dropCallbackRate: 1 });
      const devices = inState('active', 3);
      const { requestId } = await client.devices.suspend({
        accountName: primary.accountName,
        devices: devices.map(imeiOf),
      });
      const record = emu.request(requestId)!;
      expect(record.status).to.equal('Success');
      expect(record.devices.every((d) => d.status === 'Success' && d.callbackDropped === true)).to.equal(
        true,
      );
      expect(await stateOf(devices[0]!)).to.equal('suspend');
      await emu.callbacksIdle();
      await sleep(100);
      expect(listener.received).to.have.length(0);
      const log = (await raw.control('GET', '/callbacks')).body as { deliveries: Json[] };
      expect(log.deliveries.filter((d) => d.requestId === requestId)).to.deep.equal([]);
    });

    it('dropCallbackRate below 1: every device is either called back or marked dropped', async () => {
      emu.setFaults({ dropCallbackRate: 0.3 });
      const devices = inState('active', 40).map(imeiOf);
      const { requestId } = await client.devices.suspend({ accountName: primary.accountName, devices });
      const record = emu.request(requestId)!;
      const dropped = record.devices.filter((d) => d.callbackDropped).map((d) => d.deviceIds[0]!.id);
      expect(dropped.length).to.be.within(3, 25);
      await listener.waitFor(40 - dropped.length);
      await emu.callbacksIdle();
      const called = [...callbacksOf(requestId).keys()];
      expect([...called, ...dropped].sort()).to.deep.equal(devices.map((d) => d.id).sort());
    });

    it('refuses fault values it cannot use', async () => {
      for (const body of [
        { processingSeconds: -1 },
        { neverFinishRate: 2 },
        { dropCallbackRate: 'half' },
        { neverFinishDevices: 'all' },
        { neverFinishDevices: [''] },
      ]) {
        const r = await raw.control('PUT', '/faults', body);
        expect(r.status, JSON.stringify(body)).to.equal(400);
      }
    });
  });

  describe('the request-status operation', () => {
    it('answers 400 for an unknown requestId, in the m2m error shape', async () => {
      const r = await status('8a0b7c3e-0000-4000-8000-000000000000');
      expect([r.status, r.body]).to.deep.equal([
        400,
        {
          errorCode: 'INVALID_PARAMETER',
          errorMessage: 'Request not found: 8a0b7c3e-0000-4000-8000-000000000000',
        },
      ]);
    });

    it('refuses a request of an account the user cannot see, or of another account, with 401 INVALID_ACCESS', async () => {
      const { requestId } = await client.devices.suspend({
        accountName: primary.accountName,
        devices: inState('active').map(imeiOf),
      });
      const denied = {
        errorCode: 'INVALID_ACCESS',
        errorMessage: 'The access policy denied the resource operation for this user',
      };
      // `operator` sees every account but the primary.
      const a = await status(requestId, primary.accountName, 'operator');
      expect([a.status, a.body]).to.deep.equal([401, denied]);
      const b = await status(requestId, second.accountName, 'operator');
      expect([b.status, b.body]).to.deep.equal([401, denied]);
      const c = await status(requestId, second.accountName);
      expect([c.status, c.body]).to.deep.equal([401, denied]);
    });

    it('is in the catalog as requests.status, read-only and safe to retry', async () => {
      const { CATALOG } = await import('../../src/api/catalog.js');
      expect(CATALOG['requests.status']).to.include({
        area: 'm2m',
        method: 'GET',
        path: '/m2m/v1/accounts/{accountName}/requests/{requestId}/status',
        mutating: false,
        retrySafe: true,
        errorShape: 'errorCode',
      });
    });
  });

  describe('at scale', () => {
    it('a 5,000-device suspend: one callback per device, each equal to the record', async () => {
      const big = await emulator({ seed: 'carrier-scale', accounts: 1, devicesPerAccount: 6000 });
      const c = clientFor(big);
      const l = await new Listener().start();
      try {
        const acc = ((await new Raw(big).control('GET', '/accounts')).body as { accounts: AccountView[] })
          .accounts[0]!;
        await c.callbacks.register({ accountName: acc.accountName, name: 'CarrierService', url: l.url });
        const devices = acc.devices.slice(0, 5000).map(imeiOf);
        const { requestId } = await c.devices.suspend({ accountName: acc.accountName, devices });
        const record: RequestRecord = big.request(requestId)!;
        expect(record.devices).to.have.length(5000);
        await l.waitFor(5000, 30_000);
        await big.callbacksIdle();
        const byId = new Map(l.received.map((r) => [(r.body.deviceIds as { id: string }[])[0]!.id, r.body]));
        expect(byId.size).to.equal(5000);
        for (const d of record.devices) {
          const cb = byId.get(d.deviceIds[0]!.id)!;
          expect(cb.status).to.equal(d.status);
          expect((cb.faultResponse as Json | undefined)?.faultcode).to.equal(d.reason?.code);
        }
      } finally {
        await c.close();
        await l.close();
        await big.close();
      }
    });
  });
});

describe('emulator: the request log', () => {
  const request = (id: string, size: number) =>
    new CarrierRequest({
      requestId: id,
      action: 'devices.suspend',
      account: 0,
      accountName: '0000000000-00001',
      receivedAt: 0,
      dueAt: 0,
      size,
    });

  it('keeps at least a million device entries by default', () => {
    expect(KEEP_REQUEST_DEVICES).to.be.at.least(1_000_000);
  });

  it('forgets the oldest requests past its device and request bounds', () => {
    const log = new RequestLog(10, 3);
    for (const [id, size] of [
      ['a', 4],
      ['b', 4],
      ['c', 1],
    ] as const)
      log.add(request(id, size));
    expect([...log.values()].map((r) => r.requestId)).to.deep.equal(['a', 'b', 'c']);
    log.add(request('d', 4));
    expect([...log.values()].map((r) => r.requestId)).to.deep.equal(['b', 'c', 'd']);
    expect(log.deviceCount).to.equal(9);
    log.add(request('e', 1));
    expect([...log.values()].map((r) => r.requestId)).to.deep.equal(['c', 'd', 'e']);
    // A request larger than the bound is still kept, alone.
    log.add(request('f', 50));
    expect([...log.values()].map((r) => r.requestId)).to.deep.equal(['f']);
    expect(log.get('a')).to.equal(undefined);
  });

  it('classes the carrier codes as permanent', () => {
    for (const code of Object.keys(CARRIER_ERRORS))
      expect(deviceErrorClass(code), code).to.equal('permanent');
  });
});
