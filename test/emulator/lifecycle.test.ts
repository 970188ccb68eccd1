import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import { ApiError, LoginError, SESSION_EXPIRED_MESSAGE } from '../../src/errors.js';
import type { Emulator } from '../../src/emulator/index.js';
import { type AccountView, clientFor, emulator, idOf, imeiOf, type Json, Raw, world } from './helpers.js';

type Device = AccountView['devices'][number];

describe('emulator: state over time', () => {
  let emu: Emulator;
  let raw: Raw;
  let client: Client;
  let primary: AccountView;

  before(async () => {
    emu = await emulator({ seed: 'lifecycle', accounts: 3, devicesPerAccount: 3000 });
    raw = new Raw(emu);
    client = clientFor(emu);
    primary = (await world(raw)).accounts[0]!;
  });

  after(async () => {
    await client.close();
    await emu.close();
  });

  describe('exclusions: append, replace, allDevice (spec section 3)', () => {
    const iot = () => primary.devices.filter((d) => d.iot && d.state === 'active' && d.hasCachedLocation);
    const set = (body: Json) => client.location.setExclusions({ accountName: primary.accountName, ...body });
    const get = () => client.location.getExclusions({ accountName: primary.accountName });
    const locateOne = async (d: Device) => {
      const r = await raw.api('POST', '/loc/v1/locations', {
        accountName: primary.accountName,
        deviceList: [imeiOf(d)],
      });
      return r.status === 200 ? 'located' : String((r.body as Json).errorMessage);
    };

    it('moves through every transition of the table', async () => {
      const [a, b, c, d] = iot().map((x) => idOf(x, 'imei')) as [string, string, string, string];
      expect(await get()).to.include({ allDevice: false, totalCount: 0 });

      await set({ type: 'replace', exclusion: [a, b] });
      expect((await get()).exclusion).to.deep.equal([a, b]);

      await set({ type: 'append', exclusion: [c] });
      expect((await get()).exclusion).to.deep.equal([a, b, c]);

      await set({ type: 'append', exclusion: [b, d] });
      expect((await get()).exclusion).to.deep.equal([a, b, c, d]);

      // No type means replace: devices left out are locatable again.
      await set({ exclusion: [d] });
      expect((await get()).exclusion).to.deep.equal([d]);
      expect(await locateOne(iot()[0]!)).to.equal('located');
      expect(await locateOne(iot()[3]!)).to.equal('Consent check failed');

      await set({ allDevice: true });
      expect(await get()).to.include({ allDevice: true, totalCount: 0 });
      expect(await locateOne(iot()[5]!)).to.equal('Consent check failed');

      // Appending to "all devices" keeps every device excluded.
      await set({ type: 'append', exclusion: [a] });
      expect(await get()).to.deep.include({ allDevice: true, exclusion: [a] });

      await set({ allDevice: false, exclusion: [] });
      expect(await get()).to.deep.include({ allDevice: false, exclusion: [] });
      expect(await locateOne(iot()[5]!)).to.equal('located');
    });

    it('pages a long exclusion list 1,000 at a time, and removes devices by query', async () => {
      const ids = iot()
        .slice(0, 1500)
        .map((x) => idOf(x, 'imei'));
      expect(ids).to.have.length(1500);
      await set({ type: 'replace', exclusion: ids });
      const page0 = await raw.api('GET', `/loc/v1/consents/${primary.accountName}/index/0`);
      expect(page0.body).to.deep.include({ hasMoreData: true, totalCount: 1500 });
      expect((page0.body as Json).exclusion).to.have.length(1000);
      expect((await get()).exclusion).to.deep.equal(ids);

      const r = await raw.api(
        'DELETE',
        `/loc/v1/consents?accountName=${primary.accountName}&deviceList=${ids.slice(0, 10).join(',')}`,
      );
      expect(r.body).to.deep.equal({ success: true });
      expect((await get()).exclusion).to.deep.equal(ids.slice(10));
      await set({ allDevice: false, exclusion: [] });
    });
  });

  describe('location reports', () => {
    const devices = () =>
      primary.devices
        .filter((d) => d.iot)
        .slice(0, 2500)
        .map(imeiOf);
    const status = (txid: string) =>
      client.location.getReportStatus({ accountName: primary.accountName, txid });

    it('moves QUEUED → INPROGRESS → COMPLETED on the simulated clock, then pages 1,000 at a time', async () => {
      const created = await client.location.createReport({
        accountName: primary.accountName,
        deviceList: devices(),
        cacheMode: '1',
      });
      const r = created.reports[0]!;
      expect(r).to.include({ status: 'QUEUED', estimatedDuration: '3', devices: 2500 });
      expect((await status(r.txid)).status).to.equal('QUEUED');
      const page = () =>
        raw.api('GET', `/loc/v1/locationreports/${primary.accountName}/report/${r.txid}/index/0`);
      expect(((await page()).body as Json).errorMessage).to.equal('Report is not completed');

      emu.advance(50);
      expect((await status(r.txid)).status).to.equal('INPROGRESS');
      emu.advance(129);
      expect((await status(r.txid)).status).to.equal('INPROGRESS');
      emu.advance(1);
      expect((await status(r.txid)).status).to.equal('COMPLETED');

      const first = (await page()).body as Json;
      expect(first).to.include({ startIndex: 0, totalCount: 2500, hasMoreData: true });
      expect(first.devLocationList).to.have.length(1000);
      const last = await raw.api(
        'GET',
        `/loc/v1/locationreports/${primary.accountName}/report/${r.txid}/index/2000`,
      );
      expect(last.body).to.include({ startIndex: 2000, hasMoreData: false });
      expect((last.body as Json).devLocationList).to.have.length(500);

      const all = await client.location.getReport({ accountName: primary.accountName, txid: r.txid });
      expect(all.devLocationList).to.have.length(2500);
      expect(all.devLocationList.map((e) => e.msid)).to.deep.equal(devices().map((d) => d.id));
    });

    it('cancels a report in progress, and refuses to cancel a completed one', async () => {
      const created = await client.location.createReport({
        accountName: primary.accountName,
        deviceList: devices().slice(0, 10),
        cacheMode: '2',
      });
      const txid = created.reports[0]!.txid;
      expect(created.reports[0]!.estimatedDuration).to.equal('6');
      emu.advance(120);
      expect((await status(txid)).status).to.equal('INPROGRESS');
      expect(await client.location.cancelReport({ accountName: primary.accountName, txid })).to.deep.equal({
        txid,
      });
      const gone = await raw.api(
        'GET',
        `/loc/v1/locationreports/${primary.accountName}/report/${txid}/status`,
      );
      expect([gone.status, (gone.body as Json).errorMessage]).to.deep.equal([400, 'Report not found']);

      const done = await client.location.createReport({
        accountName: primary.accountName,
        deviceList: devices().slice(0, 3),
      });
      const err = await client.location
        .cancelReport({ accountName: primary.accountName, txid: done.reports[0]!.txid })
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ApiError);
      expect((err as ApiError).apiMessage).to.equal('Unable to Cancel');
    });

    it('keeps a report for 30 days', async () => {
      const done = await client.location.createReport({
        accountName: primary.accountName,
        deviceList: devices().slice(0, 3),
      });
      const txid = done.reports[0]!.txid;
      emu.advance(29 * 86_400);
      expect((await status(txid)).status).to.equal('COMPLETED');
      emu.advance(2 * 86_400);
      const err = await status(txid).catch((e: unknown) => e);
      expect((err as ApiError).apiMessage).to.equal('Report not found');
    });
  });

  describe('sessions', () => {
    const consents = (token: string) =>
      raw.send('GET', `/api/loc/v1/consents/${primary.accountName}/index/0`, undefined, {
        authorization: `Bearer ${bearer}`,
        'x-m2m-token': token,
      });
    let bearer: string;

    before(async () => {
      bearer = await raw.token();
    });

    it('expire after 20 idle minutes by default; each use restarts the idle time', async () => {
      const token = await raw.login();
      emu.advance(19 * 60);
      expect((await consents(token)).status).to.equal(200);
      emu.advance(19 * 60);
      expect((await consents(token)).status).to.equal(200);
      emu.advance(20 * 60 + 1);
      const r = await consents(token);
      expect([r.status, r.body]).to.deep.equal([
        400,
        { errorCode: 'INVALID_PARAMETER', errorMessage: SESSION_EXPIRED_MESSAGE },
      ]);
    });

    it('expire after sessionTtlSeconds when the fault sets it; the client logs in again once', async () => {
      await raw.control('PUT', '/faults', { sessionTtlSeconds: 60 });
      try {
        const token = await raw.login();
        emu.advance(59);
        expect((await consents(token)).status).to.equal(200);
        emu.advance(61);
        expect((await consents(token)).status).to.equal(400);

        const c = clientFor(emu);
        await c.location.getExclusions({ accountName: primary.accountName });
        emu.advance(61);
        await c.location.getExclusions({ accountName: primary.accountName });
        expect(c.stats.logins).to.equal(2);
        expect(c.stats.sessionRenewals).to.equal(1);
        await c.close();
      } finally {
        await raw.control('PUT', '/faults', {});
      }
    });

    it('end at logout', async () => {
      const token = await raw.login();
      const out = await raw.send(
        'POST',
        '/api/m2m/v1/session/logout',
        {},
        { authorization: `Bearer ${bearer}`, 'x-m2m-token': token },
      );
      expect(out.status).to.equal(200);
      expect(((await consents(token)).body as Json).errorMessage).to.equal(SESSION_EXPIRED_MESSAGE);
    });

    it('need both tokens', async () => {
      const token = await raw.login();
      const noBearer = await raw.send(
        'GET',
        `/api/loc/v1/consents/${primary.accountName}/index/0`,
        undefined,
        { 'x-m2m-token': token },
      );
      expect(noBearer.status).to.equal(401);
      const badBearer = await raw.send(
        'GET',
        `/api/loc/v1/consents/${primary.accountName}/index/0`,
        undefined,
        {
          authorization: 'Bearer not-a-token',
          'x-m2m-token': token,
        },
      );
      expect(badBearer.status).to.equal(401);
      const noSession = await raw.send(
        'GET',
        `/api/loc/v1/consents/${primary.accountName}/index/0`,
        undefined,
        {
          authorization: `Bearer ${bearer}`,
        },
      );
      expect(noSession.status).to.equal(401);
    });
  });

  describe('login lockout', () => {
    afterEach(() => emu.reset({ seed: 'lifecycle', accounts: 3, devicesPerAccount: 3000 }));

    const attempt = (password: string, username = 'field') =>
      raw.send(
        'POST',
        '/api/m2m/v1/session/login',
        { username, password },
        { authorization: `Bearer ${bearer}` },
      );
    let bearer: string;
    before(async () => {
      bearer = await raw.token();
    });

    it('locks the user after five consecutive failed logins, even for the right password', async () => {
      for (let i = 0; i < 5; i++) {
        const r = await attempt('wrong');
        expect([r.status, (r.body as Json).errorMessage]).to.deep.equal([
          401,
          'Invalid username or password',
        ]);
      }
      const locked = await attempt('field-password');
      expect(locked.status).to.equal(403);
      expect(locked.body).to.deep.include({ errorCode: 'USER_LOCKED' });
      expect((await attempt('operator-password', 'operator')).status).to.equal(200);
      const users = ((await raw.control('GET', '/accounts?devices=0')).body as { users: Json[] }).users;
      expect(users.find((u) => u.username === 'field')!.locked).to.equal(true);
    });

    it('counts consecutive failures only: a good login in between starts again', async () => {
      for (let i = 0; i < 4; i++) expect((await attempt('wrong')).status).to.equal(401);
      expect((await attempt('field-password')).status).to.equal(200);
      for (let i = 0; i < 4; i++) expect((await attempt('wrong')).status).to.equal(401);
      expect((await attempt('field-password')).status).to.equal(200);
    });

    it('the client tries a refused login once, not in a loop', async () => {
      const c = clientFor(emu, { username: 'field', password: 'wrong' });
      for (let i = 0; i < 3; i++) {
        const err = await c.location
          .getExclusions({ accountName: primary.accountName })
          .catch((e: unknown) => e);
        expect(err).to.be.instanceOf(LoginError);
      }
      expect(c.stats.logins).to.equal(1);
      expect((await attempt('field-password')).status).to.equal(200);
      await c.close();
    });
  });

  it('a client for another user gets 401 INVALID_ACCESS for a foreign account', async () => {
    const c = clientFor(emu, { username: 'field', password: 'field-password' });
    const err = await c.devices.list({ accountName: primary.accountName }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ApiError);
    expect(err).to.include({ status: 401, apiCode: 'INVALID_ACCESS', retryClass: 'permanent' });
    await c.close();
  });
});

describe('emulator: OAuth bearer tokens', () => {
  let emu: Emulator;
  let raw: Raw;
  let wall = Date.UTC(2026, 5, 1);

  before(async () => {
    emu = await emulator({ seed: 'oauth', devicesPerAccount: 5, wallClock: () => wall });
    raw = new Raw(emu);
  });
  after(() => emu.close());

  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  const token = (auth: string, body = 'grant_type=client_credentials') =>
    raw.send('POST', '/api/ts/v1/oauth2/token', body, {
      authorization: auth,
      'content-type': 'application/x-www-form-urlencoded',
    });
  const good = () => basic(emu.defaults.clientId, emu.defaults.clientSecret);

  it('gives the same token within the hour, and a new one after it', async () => {
    const first = (await token(good())).body as Json;
    expect(first).to.include({ token_type: 'Bearer', expires_in: 3600 });
    wall += 600_000;
    const second = (await token(good())).body as Json;
    expect(second.access_token).to.equal(first.access_token);
    expect(second.expires_in).to.equal(3000);
    wall += 3_000_000;
    const third = (await token(good())).body as Json;
    expect(third.access_token).to.not.equal(first.access_token);
    const login = await raw.send(
      'POST',
      '/api/m2m/v1/session/login',
      { username: 'admin', password: 'admin-password' },
      {
        authorization: `Bearer ${String(first.access_token)}`,
      },
    );
    expect(login.status).to.equal(401);
  });

  it('revokes a token', async () => {
    const t = String(((await token(good())).body as Json).access_token);
    const revoke = await raw.send('POST', '/api/ts/v1/oauth2/revoke', `token=${t}`, {
      authorization: good(),
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(revoke.status).to.equal(200);
    const login = await raw.send(
      'POST',
      '/api/m2m/v1/session/login',
      { username: 'admin', password: 'admin-password' },
      {
        authorization: `Bearer ${t}`,
      },
    );
    expect(login.status).to.equal(401);
    expect(((await token(good())).body as Json).access_token).to.not.equal(t);
  });

  it('refuses wrong client credentials and other grants', async () => {
    const bad = await token(basic(emu.defaults.clientId, 'nope'));
    expect([bad.status, (bad.body as Json).error]).to.deep.equal([401, 'invalid_client']);
    const grant = await token(good(), 'grant_type=password');
    expect([grant.status, (grant.body as Json).error]).to.deep.equal([400, 'unsupported_grant_type']);
  });
});
