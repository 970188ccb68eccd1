import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { emulator, idOf, Raw, world, type AccountView, type Json } from './helpers.js';

describe('emulator: faults and the record of calls', () => {
  let emu: Emulator;
  let raw: Raw;
  let primary: AccountView;

  before(async () => {
    emu = await emulator({ seed: 'faults', devicesPerAccount: 60 });
    raw = new Raw(emu);
    primary = (await world(raw)).accounts[0]!;
  });
  after(() => emu.close());
  afterEach(() => raw.control('PUT', '/faults', {}));

  const active = (skip = 0) => primary.devices.filter((d) => d.state === 'active')[skip]!;
  const suspend = (d: AccountView['devices'][number]) =>
    raw.api('POST', '/m2m/v1/devices/actions/suspend', {
      accountName: primary.accountName,
      devices: [{ deviceIds: [{ id: idOf(d, 'imei'), kind: 'imei' }] }],
    });
  const consents = () => raw.api('GET', `/loc/v1/consents/${primary.accountName}/index/0`);

  it('answers 429 with Retry-After above maxRequestsPerSecond, in any one-second window', async () => {
    await consents();
    await raw.control('PUT', '/faults', { maxRequestsPerSecond: 5 });
    const answers = await Promise.all(Array.from({ length: 12 }, () => consents()));
    const limited = answers.filter((a) => a.status === 429);
    expect(answers.filter((a) => a.status === 200)).to.have.length(5);
    expect(limited).to.have.length(7);
    expect(limited[0]!.headers['retry-after']).to.equal('1');
    expect(limited[0]!.body).to.deep.equal({
      errorCode: 'TOO_MANY_REQUESTS',
      errorMessage: 'Too many requests',
    });
    await new Promise((r) => setTimeout(r, 1000));
    expect((await consents()).status).to.equal(200);
  });

  it('delays every answer by latencyMs', async () => {
    await raw.control('PUT', '/faults', { latencyMs: 150 });
    const began = performance.now();
    expect((await consents()).status).to.equal(200);
    expect(performance.now() - began).to.be.at.least(145);
  });

  it('tells the requests it has received and not yet answered, counted or not', async () => {
    const counted = async () => {
      const { actions } = (await raw.control('GET', '/calls?devices=0')).body as {
        actions: Record<string, number>;
      };
      return Object.values(actions).reduce((a, b) => a + b, 0);
    };
    await raw.control('PUT', '/faults', { latencyMs: 300 });
    const before = await counted();
    expect(emu.requestsInFlight()).to.equal(0);
    const answer = consents();
    while (emu.requestsInFlight() === 0) await new Promise((r) => setTimeout(r, 5));
    // Received, held by its latency: in flight, not yet counted.
    expect(await counted()).to.equal(before);
    expect(emu.requestsInFlight()).to.equal(1);
    expect((await answer).status).to.equal(200);
    expect(emu.requestsInFlight()).to.equal(0);
    expect(await counted()).to.equal(before + 1);
  });

  it('holds the requests of an action after the first ones, before they act, until released', async () => {
    const [d1, d2, d3] = [active(4), active(5), active(6)];
    const suspends = async () =>
      ((await raw.control('GET', '/calls?devices=0')).body as { actions: Record<string, number> }).actions[
        'devices.suspend'
      ] ?? 0;
    const before = await suspends();
    const hold = emu.hold('devices.suspend', 1);
    expect((await suspend(d1)).status, 'the one let through').to.equal(200);
    const second = suspend(d2);
    const third = suspend(d3);
    while (hold.held < 2) await new Promise((r) => setImmediate(r));
    // Another action goes on; the held ones are in flight, not counted, and have not acted.
    expect((await consents()).status).to.equal(200);
    expect([emu.requestsInFlight(), await suspends()]).to.deep.equal([2, before + 1]);
    const calls = (await raw.control('GET', `/calls?device=${idOf(d2, 'imei')}`)).body as Json;
    expect(calls.devices, 'the held request has not acted').to.deep.equal({ [idOf(d2, 'imei')]: [] });
    hold.release();
    expect([(await second).status, (await third).status]).to.deep.equal([200, 200]);
    expect([hold.held, emu.requestsInFlight(), await suspends()]).to.deep.equal([0, 0, before + 3]);
    expect((await suspend(active(7))).status, 'released: no more held').to.equal(200);
    expect(() => emu.hold('devices.suspnd')).to.throw(
      RangeError,
      'Expected `action` to be an action of the catalog (e.g. devices.suspend), got devices.suspnd',
    );
    expect(() => emu.hold('devices.suspend', -1)).to.throw(
      RangeError,
      'Expected `pass` to be a whole number from 0, got -1',
    );
  });

  it('answers 500 before acting under errorRate: nothing is applied', async () => {
    const d = active(0);
    await raw.control('PUT', '/faults', { errorRate: 1 });
    const r = await suspend(d);
    expect([r.status, r.body]).to.deep.equal([
      500,
      { errorCode: 'INTERNAL_ERROR', errorMessage: 'Internal system error' },
    ]);
    const calls = (await raw.control('GET', `/calls?device=${idOf(d, 'imei')}`)).body as Json;
    expect(calls.devices).to.deep.equal({ [idOf(d, 'imei')]: [] });
  });

  it('resets the connection after acting under resetRate: the answer is lost, the mutation is not', async () => {
    const d = active(1);
    await raw.control('PUT', '/faults', { resetRate: 1 });
    const err = await suspend(d).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Error);
    await raw.control('PUT', '/faults', {});
    const calls = (await raw.control('GET', `/calls?device=${idOf(d, 'iccid')}`)).body as {
      devices: Record<string, Json[]>;
    };
    const list = calls.devices[idOf(d, 'imei')]!;
    expect(list.map((m) => m.action)).to.deep.equal(['devices.suspend']);
  });

  it('records every mutation per device and every call per action, so that tests can prove exactly-once', async () => {
    const d = active(2);
    const before = (await raw.control('GET', '/calls')).body as { actions: Record<string, number> };
    const first = await suspend(d);
    const second = await suspend(d);
    const calls = (await raw.control('GET', '/calls')).body as {
      actions: Record<string, number>;
      devices: Record<string, Json[]>;
    };
    expect(calls.actions['devices.suspend']).to.equal((before.actions['devices.suspend'] ?? 0) + 2);
    const list = calls.devices[idOf(d, 'imei')]!;
    expect(list.map((m) => [m.action, m.requestId])).to.deep.equal([
      ['devices.suspend', (first.body as Json).requestId],
      ['devices.suspend', (second.body as Json).requestId],
    ]);
    expect(list[0]!.at).to.match(/^\d{4}-\d{2}-\d{2}T/);
  });

  it('gives each device the same injected errors whatever requests came before it, and whatever its batch', async () => {
    // Two location requests of ten cached devices each, at cacheMode 0 where a cache miss may be injected: each
    // device's outcome, asked A then B; in a world reset to the same seed, B then A; then all in one request,
    // in reverse order. Then asked again: fresh draws.
    const cached = primary.devices.filter((d) => d.iot && d.state === 'active' && d.hasCachedLocation);
    expect(cached.length).to.be.at.least(20);
    const [a, b] = [cached.slice(0, 10), cached.slice(10, 20)].map((ds) =>
      ds.map((d) => ({ id: idOf(d, 'imei'), kind: 'imei' })),
    );
    const outcomes = async (order: { id: string; kind: string }[][]) => {
      await raw.control('POST', '/reset', { seed: 'faults', devicesPerAccount: 60 });
      await raw.control('PUT', '/faults', { deviceErrors: { 'SVC CACHE UNAVAILABLE': 0.4 } });
      // A reset ends the sessions: a client of its own logs in again.
      const fresh = new Raw(emu);
      const byDevice = new Map<string, string>();
      for (const deviceList of order) {
        const r = await fresh.api('POST', '/loc/v1/locations', {
          accountName: primary.accountName,
          deviceList,
        });
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        for (const e of r.body as { msid: string; error: { type?: string } }[])
          byDevice.set(e.msid, e.error.type ?? 'located');
      }
      return byDevice;
    };
    const first = await outcomes([a!, b!]);
    expect(new Set(first.values()), 'both outcomes occur').to.deep.equal(
      new Set(['located', 'SVC CACHE UNAVAILABLE']),
    );
    expect(await outcomes([b!, a!])).to.deep.equal(first);
    expect(await outcomes([[...b!, ...a!].reverse()])).to.deep.equal(first);
    // Each device asked twice: the second answers (those kept) are fresh draws, not the first ones again.
    const again = await outcomes([a!, b!, a!, b!]);
    expect(again.size).to.equal(20);
    expect(again).to.not.deep.equal(first);
  });

  it('refuses a fault set it does not understand', async () => {
    for (const body of [
      { errorRate: 2 },
      { retries: 1 },
      { deviceErrors: { 'NOT A 7.3 TYPE': 0.1 } },
      { sessionTtlSeconds: 0 },
    ]) {
      const r = await raw.control('PUT', '/faults', body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
    }
    await raw.control('PUT', '/faults', { latencyMs: 5, deviceErrors: { TIMEOUT: 0.5 } });
    const now = (await raw.control('GET', '/faults')).body as Json;
    expect(now).to.deep.include({
      latencyMs: 5,
      errorRate: 0,
      sessionTtlSeconds: 1200,
      deviceErrors: { TIMEOUT: 0.5 },
    });
  });

  it('moves the clock by the control API', async () => {
    const before = ((await raw.control('GET', '/clock')).body as Json).now as string;
    const r = await raw.control('POST', '/clock/advance', { seconds: 3600 });
    expect(Date.parse((r.body as Json).now as string) - Date.parse(before)).to.equal(3_600_000);
    expect((await raw.control('POST', '/clock/advance', { seconds: -1 })).status).to.equal(400);
  });

  it('refuses a control field or query parameter it does not take, naming those it takes', async () => {
    const answers: Record<string, unknown> = {};
    for (const [method, path, body] of [
      ['POST', '/reset', { sed: 5 }],
      ['POST', '/clock/advance', { second: 5 }],
      ['PUT', '/clock', { timescale: 2 }],
      ['GET', '/requests?limt=5'],
      ['GET', '/calls?devise=1'],
      ['GET', '/accounts?devices=ten'],
      ['GET', '/faults?all=1'],
    ] as const) {
      const r = await raw.control(method, path, body);
      answers[`${method} ${path}`] = [r.status, (r.body as Json).error];
    }
    expect(answers).to.deep.equal({
      'POST /reset': [
        400,
        'unknown field "sed": this body takes seed, accounts, devicesPerAccount, timeScale',
      ],
      'POST /clock/advance': [400, 'unknown field "second": this body takes seconds'],
      'PUT /clock': [400, 'unknown field "timescale": this body takes timeScale'],
      'GET /requests?limt=5': [
        400,
        'unknown query parameter "limt": this path takes requestId, account, action, limit',
      ],
      'GET /calls?devise=1': [400, 'unknown query parameter "devise": this path takes device, devices'],
      'GET /accounts?devices=ten': [400, 'devices must be an integer from 0 up'],
      'GET /faults?all=1': [400, 'unknown query parameter "all": this path takes none'],
    });
    // The world was not reset by the refused request: the seed is this test's.
    expect(((await raw.control('GET', '/accounts?devices=0')).body as Json).seed).to.equal('faults');
  });
});
