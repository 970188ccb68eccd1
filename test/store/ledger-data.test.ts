/**
 * The ledger keeps what a device-state action was accepted under (its request id) and the data a step returned
 * per device (a location), through the entry grouping, the per-device view and a later confirming entry; the
 * inbox keeps one message per device of a request. On every backend.
 */
import { expect } from 'chai';
import { groupResults } from '../../src/runner/devices.js';
import type { DeviceResult, Store } from '../../src/store/store.js';
import { forEachBackend } from './backends.js';
import { allRows, message, run } from './fixtures.js';

forEachBackend('request ids and per-device data in the ledger', (b) => {
  let store: Store;
  beforeEach(async () => {
    store = await b.open();
    store.createRun(run('r1', { playbook: 'p', inputs: {}, startedAt: '2026-11-23T00:00:00.000Z' }));
  });

  it('reads back each device with its own data and its group request id, the later entry counting', async () => {
    const located = (id: string, lat: number): DeviceResult => ({
      deviceId: id,
      kind: 'imei',
      outcome: 'succeeded',
      attempts: 1,
      data: { latitude: lat, longitude: -lat, radius: 100, time: '2026-11-23T00:00:00Z', cached: false },
    });
    const failed: DeviceResult = {
      deviceId: 'c',
      kind: 'imei',
      outcome: 'failed',
      errorType: 'ABSENT SUBSCRIBER',
      errorClass: 'transient',
      attempts: 1,
    };
    const groups = groupResults([located('a', 1), failed, located('b', 2)]);
    expect(groups.find((g) => g.outcome === 'succeeded')?.data).to.have.length(2);
    store.recordDevices('r1', 'locate', groups, '2026-11-23T00:00:01.000Z');
    store.recordDevices(
      'r1',
      'suspend',
      [{ kind: 'imei', outcome: 'accepted', attempts: 1, requestId: 'req-1', ids: ['x', 'y'] }],
      '2026-11-23T00:00:02.000Z',
    );
    store.recordDevices(
      'r1',
      'suspend',
      [{ kind: 'imei', outcome: 'succeeded', attempts: 1, requestId: 'req-1', ids: ['x'] }],
      '2026-11-23T00:00:03.000Z',
    );
    const rows = await store.deviceResults('r1');
    const by = new Map(rows.map((r) => [`${r.step}/${r.deviceId}`, r]));
    expect(by.get('locate/a')?.data).to.deep.include({ latitude: 1, longitude: -1 });
    expect(by.get('locate/b')?.data).to.deep.include({ latitude: 2 });
    expect(by.get('locate/c')?.data).to.equal(undefined);
    expect(by.get('suspend/x')).to.deep.include({ outcome: 'succeeded', requestId: 'req-1' });
    expect(by.get('suspend/y')).to.deep.include({ outcome: 'accepted', requestId: 'req-1' });
    const view = await allRows(store.eachDeviceResult('r1'));
    expect(view.find((r) => r.deviceId === 'b')?.data).to.deep.include({ latitude: 2 });
    expect(view.find((r) => r.deviceId === 'x')?.outcome).to.equal('succeeded');
    // Read again from another store, once committed: the data is stored, not only held by this one.
    await store.durable();
    const other = await b.reopen(store);
    expect(await other.deviceResults('r1')).to.deep.equal(rows);
  });

  it('stores one inbox message per device of a request, and finds them by request id', async () => {
    expect(
      await store.appendInbox('A', [
        message('req-9', 'imei:1'),
        message('req-9', 'imei:2'),
        message('req-9', 'imei:1'),
      ]),
    ).to.deep.equal([1, 2, 'duplicate']);
    expect((await store.inboxByRequest(['req-9'])).map((e) => e.device)).to.deep.equal(['imei:1', 'imei:2']);
    expect(await store.inboxByRequest(['other'])).to.deep.equal([]);
    // The same message again, in a later transaction or from another store, is a duplicate too.
    const other = await b.reopen(store);
    const again = await other.appendInbox('B', [message('req-9', 'imei:2'), message('req-9')]);
    expect(again[0]).to.equal('duplicate');
    expect(again[1]).to.be.a('number').above(2);
    expect((await other.inboxByRequest(['req-9'])).map((e) => e.device ?? null)).to.deep.equal([
      'imei:1',
      'imei:2',
      null,
    ]);
  });
});
