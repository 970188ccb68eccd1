/**
 * The runs confirming requests read the inbox's stored messages of their requests together: one read of the
 * store for the follows made while another read was on its way, each run handed its own messages only, in order
 * of arrival, and nothing once it stopped following. On every backend.
 */
import { expect } from 'chai';
import { CarrierConfirmations } from '../../src/daemon/confirmations.js';
import type { Store } from '../../src/store/store.js';
import type { CarrierResult } from '../../src/runner/types.js';
import { forEachBackend } from '../store/backends.js';
import { until } from '../store/fixtures.js';

/** A CarrierService message of one device's result. */
function result(requestId: string, device: string) {
  return {
    service: 'CarrierService',
    kind: 'suspendResponse',
    requestId,
    device: `imei:${device}`,
    payload: { requestId, status: 'Success', deviceIds: [{ kind: 'imei', id: device }] },
    receivedAt: '2026-11-28T00:00:00.000Z',
  };
}

forEachBackend('confirmations read the inbox', (b) => {
  let store: Store;
  let reads: string[][];
  let confirmations: CarrierConfirmations;
  beforeEach(async () => {
    store = await b.open();
    reads = [];
    // The store as the daemon uses it, each read recorded as it is sent.
    confirmations = new CarrierConfirmations({
      inboxByRequest: (ids) => {
        reads.push(ids);
        return store.inboxByRequest(ids);
      },
    });
  });

  it('reads the follows made during a read in one read, and hands each its own in order', async () => {
    await store.appendInbox('me', [
      result('r1', '1'),
      result('r2', '2'),
      result('r3', '3'),
      result('r1', '4'),
    ]);
    const got = new Map<string, string[]>();
    const follow = (name: string, ids: string[]) =>
      confirmations.follow(ids, (requestId: string, r: CarrierResult) =>
        got.set(name, [...(got.get(name) ?? []), `${requestId}/${r.device}`]),
      );
    follow('a', ['r1']);
    follow('b', ['r2', 'r1']);
    const stopC = follow('c', ['r3']);
    follow('d', ['r9']);
    stopC();
    await until(() => got.get('a')?.length === 2 && got.get('b')?.length === 3);
    // The first follow's read went out at once; the three after it waited for it, and went together.
    expect(reads).to.deep.equal([['r1'], ['r2', 'r1', 'r3', 'r9']]);
    expect(got.get('a')).to.deep.equal(['r1/imei:1', 'r1/imei:4']);
    expect(got.get('b')).to.deep.equal(['r1/imei:1', 'r2/imei:2', 'r1/imei:4']);
    // c stopped following before its read came back; d's request has no message yet.
    expect([...got.keys()].sort()).to.deep.equal(['a', 'b']);
    // A message stored after the reads is handed as it is published.
    confirmations.publish({ ...result('r9', '9') });
    expect(got.get('d')).to.deep.equal(['r9/imei:9']);
  });

  it('reads on after a failed read: those runs wait, the next read goes out', async () => {
    await store.appendInbox('me', [result('r1', '1'), result('r2', '2')]);
    let fail = true;
    const flaky = new CarrierConfirmations({
      inboxByRequest: (ids) => {
        reads.push(ids);
        if (fail) {
          fail = false;
          return Promise.reject(new Error('connection lost'));
        }
        return store.inboxByRequest(ids);
      },
    });
    const got: string[] = [];
    flaky.follow(['r1'], (id) => got.push(id));
    flaky.follow(['r2'], (id) => got.push(id));
    await until(() => got.length === 1);
    expect(reads).to.deep.equal([['r1'], ['r2']]);
    expect(got).to.deep.equal(['r2']);
  });
});
