/**
 * The listener files each callback under its service, or refuses it (400) saying why: a message is never
 * acknowledged and then left where no playbook reads it. On the catch-all route (`POST /callbacks`) the
 * service is the one whose event schema names the message's `…Response` member; before, every member but
 * three was filed as CarrierService, so an SMS, a suspension status or a usage report acknowledged there
 * started nothing. A route of no service (`/callbacks/FooService`, a name in the wrong case) was acknowledged
 * and its messages dropped; a requestId of any length was stored and repeated in every runs listing. A message
 * no one service tells is refused naming the services it could be from (the examples of every service are
 * posted to the daemon in callback-examples.test.ts).
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

  it('on /callbacks, refuses a message whose kind several services send, naming them and the route to use', async () => {
    // The envelope of the services of spec 2.14: CarrierService and those six may each send a fault.
    const r = await post('/callbacks', {
      ...carrierCallback('fault-only', { deviceResponse: undefined }),
      faultResponse: { faultcode: 'X', faultstring: 'y' },
    });
    expect(r.statusCode).to.equal(400);
    expect(r.json<{ error: string }>().error).to.equal(
      '`faultResponse` is sent by CarrierService, DeviceProfileService, DeviceService, DiagnosticsService, ' +
        'ExternalProvisioningChanges, NetworkEventService, StateService: post it to /callbacks/{service}, ' +
        'the route of its service, which removes the doubt',
    );
    expect(await stored()).to.deep.equal([]);
    expect(await l.rejected('invalid')).to.equal(1);
  });

  it('on /callbacks, refuses a kind no service names, with the services whose schemas take the message', async () => {
    // Any member fits the open payload of the six services of spec 2.14, and only theirs.
    const unnamed = await post('/callbacks', {
      ...carrierCallback('unnamed'),
      deviceResponse: { uploadResponse: { file: 'log.txt' } },
    });
    expect(unnamed.statusCode).to.equal(400);
    expect(unnamed.json<{ error: string }>().error).to.equal(
      '`uploadResponse` tells no service; by their schemas the message could be from DeviceProfileService, ' +
        'DeviceService, DiagnosticsService, ExternalProvisioningChanges, NetworkEventService, StateService: ' +
        'post it to /callbacks/{service}, the route of its service, which removes the doubt',
    );
    // Garbage is not taken for the message of any service: a device list that is no list fits no schema.
    const garbage = await post('/callbacks', {
      ...carrierCallback('garbage'),
      deviceIds: 'all',
      deviceResponse: { uploadResponse: 1 },
    });
    expect(garbage.statusCode).to.equal(400);
    expect(garbage.json<{ error: string }>().error).to.equal(
      "`uploadResponse` tells no service, and no service's schema takes this message: post it to " +
        `/callbacks/{service}, the route of its service, which removes the doubt (${EVENT_SERVICES.join(', ')})`,
    );
    expect(await stored()).to.deep.equal([]);
    // The route of its service takes it.
    const routed = await post('/callbacks/DeviceService', {
      ...carrierCallback('unnamed'),
      deviceResponse: { uploadResponse: {} },
    });
    expect(routed.statusCode).to.equal(200);
    expect(await stored()).to.deep.equal([['unnamed', 'DeviceService']]);
  });

  it('on /callbacks, files the state changes CarrierService names under CarrierService alone', async () => {
    // ExternalProvisioningChanges reports changes made outside the API in a member of its own: a restore
    // reported as CarrierService reports one is CarrierService's, as it always was.
    for (const kind of ['activateResponse', 'restoreResponse', 'changeIdentifierResponse'])
      expect(
        (await post('/callbacks', carrierCallback(kind, { deviceResponse: { [kind]: {} } }))).statusCode,
      ).to.equal(200);
    expect(await stored()).to.deep.equal([
      ['activateResponse', 'CarrierService'],
      ['restoreResponse', 'CarrierService'],
      ['changeIdentifierResponse', 'CarrierService'],
    ]);
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
