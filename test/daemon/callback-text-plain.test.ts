/**
 * A callback posted as `text/plain` with a valid JSON object body was answered `400 {"error":"a callback is a
 * JSON object"}` (it is one) and counted `malformed`: fastify parses text/plain by default, and the listener
 * then saw a string. Every other type that is not JSON was answered `415 callbacks are application/json`; so is
 * text/plain now.
 */
import { expect } from 'chai';
import { SqliteStore } from '../../src/store/sqlite.js';
import { carrierCallback, listener, type Listener } from '../helpers/listener.js';

describe('a callback that is not application/json', () => {
  let store: SqliteStore;
  let l: Listener;

  before(async () => {
    store = new SqliteStore(':memory:');
    l = await listener(store);
  });
  after(async () => {
    await l.app.close();
    await store.close();
  });

  it('is answered 415, text/plain as any other type, and nothing is stored', async () => {
    const body = JSON.stringify(carrierCallback('text-plain-1'));
    const types = ['text/plain', 'text/plain; charset=utf-8', 'application/xml', 'text/html'];
    const answers: Record<string, string> = {};
    for (const type of types) {
      const r = await l.app.inject({
        method: 'POST',
        url: '/callbacks/CarrierService',
        headers: { 'content-type': type },
        payload: body,
      });
      answers[type] = `${r.statusCode} ${r.json<{ error: string }>().error}`;
    }
    expect(answers).to.deep.equal(
      Object.fromEntries(types.map((t) => [t, '415 callbacks are application/json'])),
    );
    expect(store.inboxBacklog()).to.equal(0);
    expect(await l.rejected('malformed')).to.equal(types.length);
  });
});
