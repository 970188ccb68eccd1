/**
 * The console beyond loopback (docs/console.md, Access), against real `fleetbook serve` processes listening on
 * every address and asked over this machine's own non-loopback address when it has one. Without
 * FLEETBOOK_CONSOLE_TOKEN the console is off: its page and files answer 403 as its API does, saying why, so that
 * an operator trying the address sees the same answer whatever they ask. With the token, the page (which holds
 * no data) is served so that it can ask for the token, and every read of the API needs it.
 */
import { networkInterfaces } from 'node:os';
import { expect } from 'chai';
import { DaemonProcess, DaemonWorld } from '../helpers/daemon.js';
import { FIXTURES } from '../helpers/console-operator.js';

const TOKEN = 'beyond-loopback-token-0123456789';
const OFF = 'the console is off: the daemon listens beyond loopback and FLEETBOOK_CONSOLE_TOKEN is not set';

/** This machine's first non-loopback IPv4 address, else 127.0.0.1 (the daemon still listens beyond loopback). */
function outwardAddress(): string {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return '127.0.0.1';
}

describe('console: beyond loopback', function () {
  this.timeout(60_000);
  let world: DaemonWorld;
  const started: DaemonProcess[] = [];

  before(async () => {
    world = await DaemonWorld.create('console-beyond', {
      user: 'beyond-loopback-listener',
      password: 'beyond-loopback-listener-password',
    });
  });
  after(async () => {
    for (const d of started) await d.kill();
    await world?.close();
  });

  const start = async (name: string, env: Record<string, string>) => {
    const d = await DaemonProcess.start(name, {
      playbooks: FIXTURES,
      state: world.state(`${name.replace(/\W+/g, '-')}.db`),
      host: '0.0.0.0',
      env: world.env({ FLEETBOOK_LOG_LEVEL: 'warn', ...env }),
    });
    started.push(d);
    return d.url.replace('//127.0.0.1:', `//${outwardAddress()}:`);
  };

  const answers = async (base: string, paths: readonly string[]) => {
    const out: Record<string, string> = {};
    for (const path of paths) {
      const res = await fetch(`${base}${path}`);
      const text = await res.text();
      const type = res.headers.get('content-type') ?? '';
      out[path] =
        `${res.status} ${type.startsWith('application/json') ? (JSON.parse(text) as { error?: string }).error : type.split(';')[0]}`;
    }
    return out;
  };

  const PAGES = ['/', '/favicon.ico', '/console/assets/app.js', '/console/vendor/nothing.js'];

  it('without the console token, answers 403 to the page and its files as to the API, saying why', async () => {
    const base = await start('console off daemon', {});
    expect(await answers(base, [...PAGES, '/console/api/overview', '/console/api/runs'])).to.deep.equal({
      '/': `403 ${OFF}`,
      '/favicon.ico': `403 ${OFF}`,
      '/console/assets/app.js': `403 ${OFF}`,
      '/console/vendor/nothing.js': `403 ${OFF}`,
      '/console/api/overview': `403 ${OFF}`,
      '/console/api/runs': `403 ${OFF}`,
    });
    const session = await fetch(`${base}/console/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: 'any token at all, 16+' }),
    });
    expect([session.status, await session.json()], 'signing in').to.deep.equal([403, { error: OFF }]);
  });

  it('with the console token, serves the page that asks for it, and reads only with it', async () => {
    const base = await start('console token daemon', { FLEETBOOK_CONSOLE_TOKEN: TOKEN });
    const open = await answers(base, ['/', '/favicon.ico', '/console/api/runs']);
    expect(open).to.deep.equal({
      '/': '200 text/html',
      '/favicon.ico': '200 image/svg+xml',
      '/console/api/runs': '401 the console token is needed: sign in, or send it as a bearer token',
    });
    const signed = await fetch(`${base}/console/api/runs`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(signed.status, 'reading with the token').to.equal(200);
  });
});
