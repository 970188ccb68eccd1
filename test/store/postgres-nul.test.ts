/**
 * What a service answers goes to the ledger as it came: a location report's `msid` is a device id, a request's
 * `requestId` or a report's `txid` the request id of its devices. PostgreSQL's text cannot hold a NUL (U+0000),
 * nor a lone surrogate: the store keeps U+FFFD in its place (storedText), as it does for every other text it writes.
 * A device id or a location's data with one failed the commit of the whole turn (every run's writes gathered in it); a request id with
 * one, stored with U+FFFD, failed the reads by it (a resumed run's, a confirmation's) with the driver's error.
 */
import { expect } from 'chai';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.js';
import { postgresUrl } from '../helpers/postgres.js';
import { group, imei, run } from './fixtures.js';

const AT = '2026-11-23T10:00:30.000Z';

describe('PostgreSQL: a NUL in what a service answered (a device id, a request id)', () => {
  let store: PostgresStore;

  beforeEach(async () => {
    store = await openPostgresStore(await postgresUrl());
    store.createRun(run('r'));
    store.createRun(run('other'));
    await store.durable();
  });
  afterEach(async () => {
    await store.close();
  });

  it('commits a device id with one, as U+FFFD, and the other writes of its turn', async () => {
    store.recordDevices(
      'r',
      'locate',
      [
        group(['a\0b', imei(1)], {
          kind: 'msid',
          requestId: 'tx',
          data: [{ time: 'x\0', zone: '\\u0000\udc00' }, undefined],
        }),
        group(['\ud800'], { kind: 'msid', requestId: 'tx' }),
      ],
      AT,
    );
    store.saveStep('other', 'step', { done: true });
    await store.durable();
    const results = await store.deviceResults('r');
    expect(results.map((r) => [r.deviceId, r.data ?? null])).to.have.deep.members([
      ['a\ufffdb', { time: 'x\ufffd', zone: '\\u0000\ufffd' }],
      [imei(1), null],
      ['\ufffd', null],
    ]);
    expect(await store.loadSteps('other')).to.deep.equal(new Map([['step', { done: true }]]));
  });

  it('reads by a request id with one: what was stored under it, and no callback', async () => {
    store.recordDevices('r', 'locate', [group([imei(1)], { requestId: 'tx\0' })], AT);
    await store.durable();
    const under = await store.resultsUnder('r', 'locate', ['tx\0']);
    expect(under.map((g) => [g.ids, g.requestId])).to.deep.equal([[[imei(1)], 'tx\ufffd']]);
    expect(await store.inboxByRequest(['tx\0'])).to.deep.equal([]);
  });
});
