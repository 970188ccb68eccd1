/**
 * Five consecutive failed logins lock the user (spec/public-api-facts.md). A login whose answer was lost is sent
 * again, at most LOGIN_ATTEMPTS times, but every call that needs a session can start another login: with a wrong
 * password whose every refusal was lost, three calls sent six logins and locked the user. The logins whose outcome
 * the client does not know are counted across logins until one succeeds, and the client stops before the fifth
 * with a LoginError saying why. Against the emulator over loopback, whose `resetNext` fault loses the answers of
 * the next logins after the service acted (counted a failure, or made a session).
 */
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { LoginError, NetworkError } from '../../src/errors.js';
import { RATES, calls, control, emulator, setFaults } from '../runner/helpers.js';
import { failure } from '../helpers/recorder.js';

describe('logins whose answers were lost, across logins (emulator)', function () {
  this.timeout(30_000);
  let emu: Emulator;
  let client: Client | undefined;
  let account: string;

  before(async () => {
    emu = await emulator();
    account = emu.defaults.accounts[0]!;
  });
  beforeEach(() => emu.reset());
  afterEach(async () => {
    await client?.close();
    client = undefined;
  });
  after(() => emu.close());

  function connect(password = emu.defaults.password): Client {
    client = createClient({
      baseUrl: emu.baseUrl,
      clientId: emu.defaults.clientId,
      clientSecret: emu.defaults.clientSecret,
      username: emu.defaults.username,
      password,
      rates: RATES,
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
    });
    return client;
  }

  async function locked(): Promise<boolean> {
    const world = (await control(emu, 'GET', '/accounts?devices=0')) as {
      users: { username: string; locked: boolean }[];
    };
    return world.users.find((u) => u.username === emu.defaults.username)!.locked;
  }

  it('a wrong password whose refusals are all lost never locks the user', async () => {
    await setFaults(emu, { resetNext: { 'session.login': 50 } });
    const c = connect('not-the-password-5678');
    const errors = [];
    for (let i = 0; i < 4; i++) errors.push(await failure(c.devices.list({ accountName: account })));
    expect(await locked(), 'the user is locked').to.equal(false);
    // Three attempts of the first login, one of the second: four failures at most, and no fifth.
    expect((await calls(emu)).actions['session.login']).to.equal(4);
    expect(errors[0]).to.be.instanceOf(NetworkError);
    expect(errors[1]).to.be.instanceOf(LoginError);
    for (const e of errors.slice(1)) {
      const le = e as LoginError;
      expect(le).to.be.instanceOf(LoginError);
      expect(le.code).to.equal('FB_LOGIN');
      expect(le.retryClass).to.equal('permanent');
      expect(le.message).to.match(/not sending another session login as admin/);
      expect(le.message).to.match(
        /4 logins since the last one that succeeded were refused or lost their answers/,
      );
      expect(le.message).to.match(/five consecutive failed logins lock the user/);
    }
  });

  it('a login that succeeds starts the count again', async () => {
    await setFaults(emu, { resetNext: { 'session.login': 3 } });
    const c = connect();
    expect(await failure(c.devices.list({ accountName: account }))).to.be.instanceOf(NetworkError);
    // The fourth login answers: the count starts again, and a renewal has its attempts.
    await c.devices.list({ accountName: account });
    await setFaults(emu, { resetNext: { 'session.login': 2 }, sessionTtlSeconds: 60 });
    await control(emu, 'POST', '/clock/advance', { seconds: 120 });
    await c.devices.list({ accountName: account });
    expect((await calls(emu)).actions['session.login']).to.equal(7);
    expect(await locked()).to.equal(false);
  });
});
