/**
 * A bearer token the client fetched itself, refused, and the one fetched again refused too, failed the call, and
 * the next call fetched again: two token requests and two logins a call, for as long as the service refused them,
 * and `authRefused` never said so. Now the refusal is kept (`fetched token`, since when, the error, the next
 * attempt): every call fails at once, sending nothing, for a back-off of a minute, doubled each time the tokens
 * fetched after it are refused too; once one is taken the refusal clears. Each change is told once to
 * `onAuthRefused`, which the daemon writes to its log. The real emulator over loopback, behind a proxy that hands
 * out tokens it never issued; the client on a virtual clock, so that a back-off passes without waiting for it.
 */
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import {
  FETCHED_TOKEN_BACKOFF_MS,
  FETCHED_TOKEN_BACKOFF_MAX_MS,
  logAuthRefusal,
  type AuthRefusal,
} from '../../src/api/credentials.js';
import { MemoryLoginCounts } from '../../src/api/login-count.js';
import { VirtualClock } from '../../src/clock.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { AuthError } from '../../src/errors.js';
import { FAST } from '../emulator/helpers.js';
import { startRewritingProxy, type RewritingProxy } from '../helpers/rewriting-proxy.js';
import { actionCounts, captureLogger, control, type LogLine } from '../runner/helpers.js';

describe('a fetched token refused twice: kept refused for a back-off, cleared once one is taken', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let proxy: RewritingProxy;
  let rewriting = true;
  let clock: VirtualClock;
  let client: Client;
  let counts: MemoryLoginCounts;
  const lines: LogLine[] = [];

  before(async () => {
    emu = await startEmulator({ port: 0, timeScale: 0, seed: 'fetched-token-backoff', devicesPerAccount: 2 });
    let issued = 0;
    proxy = await startRewritingProxy(emu.url, (method, path, body) =>
      rewriting && method === 'POST' && path === '/api/ts/v1/oauth2/token'
        ? { ...(body as object), access_token: `never-issued-${++issued}` }
        : undefined,
    );
    clock = new VirtualClock();
    counts = new MemoryLoginCounts();
    client = createClient({
      baseUrl: `${proxy.url}/api`,
      clientId: emu.defaults.clientId,
      clientSecret: emu.defaults.clientSecret,
      username: emu.defaults.username,
      password: emu.defaults.password,
      rates: FAST,
      clock,
      logins: counts,
      // What the daemon writes to its log: one line a change.
      onAuthRefused: logAuthRefusal(captureLogger(lines)),
    });
  });
  after(async () => {
    await client?.close();
    await proxy?.close();
    await emu?.close();
  });

  const list = () => client.devices.list({ accountName: emu.defaults.accounts[0]! });
  const refusedCall = async () => {
    const e = await list().catch((x: unknown) => x);
    expect(e).to.be.instanceOf(AuthError);
    return e as AuthError;
  };
  const sent = async () => {
    const a = await actionCounts(emu);
    return { token: a['oauth.token'] ?? 0, login: a['session.login'] ?? 0, list: a['devices.list'] ?? 0 };
  };
  const iso = (ms: number) => new Date(ms).toISOString();

  it('fails at once within the back-off, tries again after it, and clears once a token is taken', async () => {
    expect(client.authRefused).to.equal(undefined);
    const first = await refusedCall();
    expect(first.message).to.match(
      new RegExp(
        `^the bearer token fetched for client ${emu.defaults.clientId} was refused, and so was the one fetched again: HTTP 401`,
      ),
    );
    expect(await sent(), 'a token fetched, then fetched again once').to.deep.equal({
      token: 2,
      login: 2,
      list: 0,
    });
    const since = clock.now();
    const refused: AuthRefusal = client.authRefused!;
    expect(refused, 'kept').to.deep.equal({
      credential: 'fetched token',
      since: iso(since),
      error: first.message,
      nextAttempt: iso(since + FETCHED_TOKEN_BACKOFF_MS),
    });
    expect(refused.error).to.match(/no failed login of the user was counted for it/);
    expect(refused.error).to.match(
      new RegExp(`fails at once until ${iso(since + FETCHED_TOKEN_BACKOFF_MS)}`),
    );

    // Within the back-off: each call fails at once with the refusal, and sends nothing.
    for (let i = 0; i < 5; i++) expect((await refusedCall()).message).to.equal(first.message);
    await clock.sleep(FETCHED_TOKEN_BACKOFF_MS - 1);
    expect((await refusedCall()).message).to.equal(first.message);
    expect(await sent(), 'nothing sent within the back-off').to.deep.equal({ token: 2, login: 2, list: 0 });

    // Past it: fetched again, refused again, and kept refused since the first time, for twice as long.
    await clock.sleep(1);
    await refusedCall();
    expect(await sent(), 'tried again once the back-off passed').to.deep.equal({
      token: 4,
      login: 4,
      list: 0,
    });
    const again = client.authRefused!;
    expect(again.since, 'refused since the first time').to.equal(iso(since));
    expect(again.nextAttempt).to.equal(iso(clock.now() + 2 * FETCHED_TOKEN_BACKOFF_MS));
    expect(again.error).to.equal((await refusedCall()).message);

    // The proxy hands out the emulator's own tokens again: still nothing sent until the back-off has passed.
    rewriting = false;
    await refusedCall();
    expect(await sent()).to.deep.equal({ token: 4, login: 4, list: 0 });
    await clock.sleep(2 * FETCHED_TOKEN_BACKOFF_MS);
    const out = await list();
    expect(out).to.have.property('devices');
    expect(client.authRefused, 'cleared once a fetched token is taken').to.equal(undefined);
    expect(await sent()).to.deep.equal({ token: 5, login: 5, list: 1 });
    await list();
    expect(await sent(), 'the token and session kept').to.deep.equal({ token: 5, login: 5, list: 2 });

    // One line as the credentials were refused, one as they were taken again: none for each call refused.
    expect(lines.map((l) => [l.level, l.message])).to.deep.equal([
      ['error', 'credentials refused'],
      ['info', 'credentials taken again'],
    ]);
    const { credential, ...rest } = refused;
    expect(lines[0]!.meta).to.deep.equal({ what: credential, ...rest });
    expect(lines[1]!.meta).to.deep.equal({ what: 'fetched token', refusedSince: iso(since) });

    // No login of the user counted, nor the user locked.
    expect(await counts.list()).to.deep.equal([]);
    const users = (await control(emu, 'GET', '/accounts?devices=0')) as {
      users: { username: string; locked: boolean }[];
    };
    expect(users.users.find((u) => u.username === emu.defaults.username)!.locked).to.equal(false);
  });

  it('doubles the back-off each time, up to its bound, and starts again from a minute once taken', async () => {
    rewriting = true;
    // An hour on, the token taken is due for a refresh: the one fetched is refused, and so is the next.
    await clock.sleep(3_600_000);
    await refusedCall();
    const waits: number[] = [];
    for (let i = 0; i < 7; i++) {
      const r = client.authRefused!;
      const wait = Date.parse(r.nextAttempt!) - clock.now();
      waits.push(wait);
      await clock.sleep(wait);
      await refusedCall();
    }
    expect(waits.map((w) => w / 60_000)).to.deep.equal([1, 2, 4, 8, 15, 15, 15]);
    expect(FETCHED_TOKEN_BACKOFF_MAX_MS).to.equal(15 * 60_000);
    rewriting = false;
    await clock.sleep(FETCHED_TOKEN_BACKOFF_MAX_MS);
    await list();
    expect(client.authRefused).to.equal(undefined);
    rewriting = true;
    await clock.sleep(3_600_000);
    await refusedCall();
    const r = client.authRefused!;
    expect(Date.parse(r.nextAttempt!) - clock.now(), 'a minute again').to.equal(FETCHED_TOKEN_BACKOFF_MS);
  });
});
