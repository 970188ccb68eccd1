/**
 * The listener files each callback under its service, or refuses it (400) saying why: a message is never
 * acknowledged and then left where no playbook reads it. On the catch-all route (`POST /callbacks`) the
 * service is the one whose event schema names the message's `…Response` member; before, every member but
 * three was filed as CarrierService, so an SMS, a suspension status or a usage report acknowledged there
 * started nothing. A route of no service (`/callbacks/FooService`, a name in the wrong case) was acknowledged
 * and its messages dropped; a requestId of any length was stored and repeated in every runs listing.
 */
import { expect } from 'chai';
import { EXAMPLES, EVENT_SERVICES } from '../../src/events/index.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import {
  LISTENER_OWNER,
  LISTENER_PASSWORD,
  LISTENER_USER,
  carrierCallback,
  listener,
  type Listener,
} from '../helpers/listener.js';

describe('the service a callback is filed under', () => {
  let store: SqliteStore;
  let l: Listener;

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    l = await listener(store);
  });
  afterEach(async () => {
    await l.app.close();
    await store.close();
  });

  const post = (url: string, body: object) =>
    l.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: body });
  const signed = (example: Record<string, unknown>, requestId: string) => ({
    ...example,
    requestId,
    username: LISTENER_USER,
    password: LISTENER_PASSWORD,
  });
  const stored = async () =>
    (await store.pendingInbox(LISTENER_OWNER, 100, 0)).map((e) => [e.requestId, e.service]);

  it('on /callbacks, files the example of each service that alone sends its kind under that service', async () => {
    // Location messages carry no credentials but a signature; their route has its own test (listener.test.ts).
    const services = [
      'CarrierService',
      'DeviceSuspensionStatus',
      'DeviceUsage',
      'EnhancedConnectivityService',
    ];
    for (const service of services) {
      const r = await post('/callbacks', signed(EXAMPLES[service as keyof typeof EXAMPLES], `id-${service}`));
      expect(r.statusCode, `${service}: ${r.body}`).to.equal(200);
    }
    expect(await stored()).to.deep.equal(services.map((s) => [`id-${s}`, s]));
  });

  it('on /callbacks, refuses a message whose kind no one service sends, naming the route to use', async () => {
    // The envelope of the services of spec 2.14: its payload member is not shown, a fault is sent by several.
    const r = await post('/callbacks', {
      ...carrierCallback('fault-only', { deviceResponse: undefined }),
      faultResponse: { faultcode: 'X', faultstring: 'y' },
    });
    expect(r.statusCode).to.equal(400);
    expect(r.json<{ error: string }>().error).to.match(
      /^no one service sends `faultResponse` messages: post this one to \/callbacks\/\{service\}/,
    );
    expect(await stored()).to.deep.equal([]);
    expect(await l.rejected('invalid')).to.equal(1);
  });

  it('refuses a route of no service, with the name meant when only the case differs', async () => {
    const ecs = signed(EXAMPLES.EnhancedConnectivityService, 'ecs-1');
    const lower = await post('/callbacks/enhancedconnectivityservice', ecs);
    expect(lower.statusCode).to.equal(400);
    expect(lower.json<{ error: string }>().error).to.equal(
      'unknown callback service enhancedconnectivityservice: did you mean EnhancedConnectivityService?',
    );
    const foo = await post('/callbacks/FooService', ecs);
    expect(foo.statusCode).to.equal(400);
    expect(foo.json<{ error: string }>().error).to.equal(
      `unknown callback service FooService: one of ${EVENT_SERVICES.join(', ')}`,
    );
    expect(await stored()).to.deep.equal([]);
    // The right route takes it.
    expect((await post('/callbacks/EnhancedConnectivityService', ecs)).statusCode).to.equal(200);
    expect(await stored()).to.deep.equal([['ecs-1', 'EnhancedConnectivityService']]);
  });

  it('refuses a requestId far longer than a UUID', async () => {
    const r = await post('/callbacks/CarrierService', carrierCallback('r'.repeat(129)));
    expect(r.statusCode).to.equal(400);
    expect(r.json<{ error: string }>().error).to.equal(
      "a requestId of 129 characters: the service's are UUIDs (at most 128 are taken)",
    );
    expect((await post('/callbacks/CarrierService', carrierCallback('r'.repeat(128)))).statusCode).to.equal(
      200,
    );
  });
});
