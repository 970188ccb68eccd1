/**
 * Issue 15, smaller point: a callback declared `charset=latin1` was read as UTF-8 and stored. JSON is UTF-8
 * (RFC 8259 section 8.1): the listener refuses any other declared charset with 415, before reading the body,
 * and takes `application/json` with no charset or with UTF-8 named in any case.
 */
import { expect } from 'chai';
import { SqliteStore } from '../../src/store/sqlite.js';
import { LISTENER_OWNER, carrierCallback, listener, type Listener } from '../helpers/listener.js';

describe('the charset of a callback (issue 15)', () => {
  let store: SqliteStore;
  let l: Listener;
  let n = 0;

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    l = await listener(store);
  });
  afterEach(async () => {
    await l.app.close();
    await store.close();
  });

  const post = (contentType: string, body: string | Buffer) =>
    l.app.inject({
      method: 'POST',
      url: '/callbacks/CarrierService',
      headers: { 'content-type': contentType },
      payload: body,
    });

  it('refuses charset=latin1 and other charsets with 415, storing nothing', async () => {
    // "é" in latin1 is one byte, 0xE9: not UTF-8.
    const body = Buffer.from(JSON.stringify(carrierCallback('latin1-1', { note: 'café' })), 'latin1');
    for (const type of [
      'application/json; charset=latin1',
      'application/json; charset=ISO-8859-1',
      'application/json;charset="windows-1252"',
      'application/json; charset=utf-16',
    ]) {
      const r = await post(type, body);
      expect(r.statusCode, type).to.equal(415);
      expect(r.json<{ error: string }>().error, type).to.match(/^callbacks are JSON in UTF-8, not charset=/);
    }
    expect(store.inboxBacklog()).to.equal(0);
    expect(await l.rejected('malformed')).to.equal(4);
  });

  it('takes application/json without a charset, and charset=utf-8 in any case', async () => {
    for (const type of [
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=UTF-8',
      'application/json;charset="Utf-8"',
    ]) {
      const id = `utf8-${++n}`;
      const r = await post(type, JSON.stringify(carrierCallback(id, { note: 'café' })));
      expect(r.statusCode, `${type}: ${r.body}`).to.equal(200);
      const [event] = (await store.pendingInbox(LISTENER_OWNER, 1, 0)).filter((e) => e.requestId === id);
      expect((event?.payload as { note?: string } | undefined)?.note, type).to.equal('café');
      await store.completeInbox([{ eventId: event?.id ?? 0, runs: [] }]);
    }
  });
});
