/**
 * `notify.webhook` reached loopback and changed the emulator's control API, with an overridden `Host` header.
 * It now refuses loopback, link-local (cloud metadata), private, unspecified and the other non-public ranges
 * unless FLEETBOOK_WEBHOOK_ALLOW names them, judging the address actually connected to (a name's every
 * resolved address, on every connection), and it cannot set `Host` or the hop-by-hop headers.
 *
 * A real webhook server on loopback, the real runner and the emulator. DNS is real for `localhost`; a made-up
 * name is resolved by an injected lookup, so that the connector's own check is what is tested.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { expect } from 'chai';
import { engineSettings, type EngineSettingsOptions } from '../../src/actions/settings.js';
import type { Client } from '../../src/api/client.js';
import { loadConfig } from '../../src/config.js';
import type { Emulator } from '../../src/emulator/index.js';
import { ConfigError } from '../../src/errors.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import type { RunSummary } from '../../src/store/store.js';
import { clientFor, emulator, memoryStore, playbook } from './helpers.js';

/** One webhook step to `inputs.url`, with `inputs.headers` and `inputs.body`, and `extra` (one line) added. */
const hook = (extra = '') => `
version: 1
name: webhook
on: { manual: true }
inputs:
  url: { type: string, required: true }
  headers: { type: object, default: {} }
  body: { type: object, default: { text: hello } }
steps:
  - id: tell
    uses: notify.webhook
    with: { url: \${{ inputs.url }}, headers: \${{ inputs.headers }}, body: \${{ inputs.body }} }
    ${extra}
`;

/** A lookup that answers made-up names from `table` and leaves the others to the system's. */
function fakeDns(table: Record<string, string[]>): LookupFunction {
  return (hostname, options, callback) => {
    const addresses = table[hostname];
    if (!addresses) {
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      return;
    }
    const all = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all) callback(null, all);
    else callback(null, all[0]!.address, all[0]!.family);
  };
}

describe('notify.webhook refuses internal addresses unless FLEETBOOK_WEBHOOK_ALLOW names them', function () {
  this.timeout(20_000);
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let server: Server;
  let port: number;
  /** The requests the webhook server received: their Host header and body. */
  let received: { headers: IncomingHttpHeaders; body: string }[];

  before(async () => {
    emu = await emulator({ devicesPerAccount: 5 });
    client = clientFor(emu);
    store = memoryStore();
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await store.close();
    await client.close();
    await emu.close();
  });
  beforeEach(() => {
    received = [];
  });

  const send = (
    url: string,
    settings: EngineSettingsOptions = {},
    o: { headers?: Record<string, string>; body?: unknown; extra?: string } = {},
  ): Promise<RunSummary> =>
    runPlaybook(playbook(hook(o.extra)), {
      client,
      store,
      inputs: { url, headers: o.headers ?? {}, ...(o.body !== undefined ? { body: o.body } : {}) },
      engine: engineSettings(settings),
    });

  const expectRefused = (s: RunSummary, host: string, why: RegExp) => {
    expect(s.status).to.equal('failed');
    expect(s.error).to.match(
      new RegExp(`^step \`tell\` failed: notify\\.webhook: refused ${host.replace(/[.[\]]/g, '\\$&')}: `),
    );
    expect(s.error).to.match(why);
    expect(s.error).to.include('FLEETBOOK_WEBHOOK_ALLOW (hosts, addresses or CIDR ranges) can allow it');
  };

  describe('refused', () => {
    it('127.0.0.1: nothing reaches the server', async () => {
      const s = await send(`http://127.0.0.1:${port}/hook`);
      expectRefused(s, '127.0.0.1', /: it is a loopback address;/);
      expect(received).to.deep.equal([]);
    });

    it('localhost: the name resolves to a loopback address, judged at the connection', async () => {
      const s = await send(`http://localhost:${port}/hook`);
      expectRefused(s, 'localhost', /it resolves to 127\.0\.0\.1, a loopback address/);
      expect(received).to.deep.equal([]);
    });

    it("the emulator's control API on loopback: refused, and the emulator's clock has not moved", async () => {
      const before = emu.now();
      const s = await send(`${emu.url}/_emulator/clock/advance`, {}, { body: { seconds: 86_400 } });
      expectRefused(s, '127.0.0.1', /a loopback address/);
      expect(emu.now()).to.equal(before);
    });

    it('169.254.169.254 (cloud metadata): refused before connecting, at once', async () => {
      const t = Date.now();
      const s = await send('http://169.254.169.254/latest/meta-data/');
      expectRefused(s, '169.254.169.254', /a link-local address \(where cloud metadata services answer\)/);
      // A connection tried to an address nothing answers waits for the connect timeout (10 s); the refusal is a
      // few milliseconds. The bound is far from both.
      expect(Date.now() - t).to.be.lessThan(5_000);
    });

    it('private, unspecified and other internal addresses, IPv4 and IPv6', async () => {
      const cases: [string, string, RegExp][] = [
        ['http://10.1.2.3/', '10.1.2.3', /a private address/],
        ['http://172.16.0.1/', '172.16.0.1', /a private address/],
        ['http://192.168.1.10/', '192.168.1.10', /a private address/],
        ['http://0.0.0.0/', '0.0.0.0', /the unspecified address/],
        ['http://100.64.0.1/', '100.64.0.1', /carrier-grade NAT/],
        ['http://[::1]/', '::1', /a loopback address/],
        ['http://[fd00::1]/', 'fd00::1', /a private \(unique local\) address/],
        ['http://[fe80::1]/', 'fe80::1', /a link-local address/],
        // An IPv4 address written as IPv6, or in another notation: the address is what counts.
        ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1', /a loopback address/],
        ['http://0x7f.1/', '127.0.0.1', /a loopback address/],
        ['http://[64:ff9b::a9fe:a9fe]/', '64:ff9b::a9fe:a9fe', /a link-local address/],
      ];
      for (const [url, host, why] of cases) expectRefused(await send(url), host, why);
    });

    it('a name that resolves to a private address, or to a public and a private one (rebinding)', async () => {
      const lookup = fakeDns({ 'hooks.test': ['10.0.0.7'], 'rebind.test': ['93.184.215.14', '127.0.0.1'] });
      expectRefused(
        await send('http://hooks.test/x', { lookup }),
        'hooks.test',
        /it resolves to 10\.0\.0\.7, a private address/,
      );
      expectRefused(
        await send(`http://rebind.test:${port}/x`, { lookup }),
        'rebind.test',
        /it resolves to 127\.0\.0\.1/,
      );
      expect(received).to.deep.equal([]);
    });

    it('a refusal is not retried, whatever retry.on says', async () => {
      const s = await send(
        `http://127.0.0.1:${port}/hook`,
        {},
        {
          extra: 'retry: { on: [network, retryable, http.5xx], maxAttempts: 5, delay: 2s }',
        },
      );
      expect(s.status).to.equal('failed');
      expect(s.steps.find((x) => x.id === 'tell')?.attempts, 'attempts').to.equal(1);
    });
  });

  describe('allowed when FLEETBOOK_WEBHOOK_ALLOW names it', () => {
    it('by address, by CIDR range, and by host name', async () => {
      for (const allow of [['127.0.0.1'], ['127.0.0.0/8'], ['10.0.0.0/8', ' 127.0.0.1 ']]) {
        const s = await send(`http://127.0.0.1:${port}/hook`, { webhookAllow: allow });
        expect(s.status, `${allow.join(',')}: ${s.error}`).to.equal('succeeded');
      }
      const byName = await send(`http://localhost:${port}/hook`, { webhookAllow: ['localhost'] });
      expect(byName.status, byName.error).to.equal('succeeded');
      expect(received.map((r) => JSON.parse(r.body) as unknown)).to.deep.equal(
        Array(4).fill({ text: 'hello' }),
      );
    });

    it('a name on the list is allowed whatever it resolves to; another name on the same address is not', async () => {
      const lookup = fakeDns({ 'hooks.test': ['127.0.0.1'], 'other.test': ['127.0.0.1'] });
      const s = await send(`http://hooks.test:${port}/x`, { lookup, webhookAllow: ['hooks.test'] });
      expect(s.status, s.error).to.equal('succeeded');
      expect(received[0]?.headers.host).to.equal(`hooks.test:${port}`);
      expectRefused(
        await send(`http://other.test:${port}/x`, { lookup, webhookAllow: ['hooks.test'] }),
        'other.test',
        /it resolves to 127\.0\.0\.1, a loopback address/,
      );
      expect(received).to.have.length(1);
    });

    it('an allowed address does not allow another one', async () => {
      expectRefused(
        await send(`http://127.0.0.1:${port}/hook`, { webhookAllow: ['10.0.0.0/8'] }),
        '127.0.0.1',
        /loopback/,
      );
    });
  });

  describe('headers', () => {
    it('Host cannot be overridden at run time, even to an allowed address', async () => {
      for (const name of ['Host', 'host', 'Connection', 'Transfer-Encoding', 'Content-Length']) {
        const s = await send(
          `http://127.0.0.1:${port}/hook`,
          { webhookAllow: ['127.0.0.1'] },
          {
            headers: { [name]: name === 'Content-Length' ? '5' : 'x' },
          },
        );
        expect(s.status).to.equal('failed');
        expect(s.error).to.include(`notify.webhook: header \`${name}\` cannot be set`);
      }
      expect(received).to.deep.equal([]);
    });

    it('Host written in the playbook is a validate error at its line and column', () => {
      const yaml = `
version: 1
name: webhook
on: { manual: true }
steps:
  - id: tell
    uses: notify.webhook
    with:
      url: https://hooks.example.com/x
      headers: { X-Team: fleet, Host: 127.0.0.1 }
`;
      expect(
        loadPlaybook(yaml, 'w.yaml').diagnostics.map((d) => `${d.line}:${d.column} [${d.rule}] ${d.message}`),
      ).to.deep.equal([
        "10:33 [webhook-header] notify.webhook: header `Host` cannot be set: it is always the URL's host",
      ]);
    });

    it('other headers are sent', async () => {
      const s = await send(
        `http://127.0.0.1:${port}/hook`,
        { webhookAllow: ['127.0.0.1'] },
        {
          headers: { 'X-Team': 'fleet', Authorization: 'Bearer t' },
        },
      );
      expect(s.status, s.error).to.equal('succeeded');
      expect(received[0]?.headers).to.include({
        'x-team': 'fleet',
        authorization: 'Bearer t',
        host: `127.0.0.1:${port}`,
      });
    });
  });

  describe('the setting', () => {
    it('FLEETBOOK_WEBHOOK_ALLOW is a comma-separated list; a wrong entry stops the start, naming it', () => {
      const config = loadConfig({ FLEETBOOK_WEBHOOK_ALLOW: 'hooks.internal.example, 10.0.0.0/8,,fd00::/8' });
      expect(config.webhookAllow).to.deep.equal(['hooks.internal.example', '10.0.0.0/8', 'fd00::/8']);
      expect(engineSettings(config).webhooks.allow).to.deep.equal(config.webhookAllow);
      expect(() => engineSettings({ webhookAllow: ['http://10.0.0.1/', '10.0.0.0/33'] }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.matches(
          /FLEETBOOK_WEBHOOK_ALLOW: "http:\/\/10\.0\.0\.1\/", "10\.0\.0\.0\/33" are not a host name/,
        );
    });

    it('FLEETBOOK_REPORTS_DIR defaults to ./reports', () => {
      expect(loadConfig({}).reportsDir).to.equal('./reports');
      expect(loadConfig({ FLEETBOOK_REPORTS_DIR: '/var/lib/fleetbook/reports' }).reportsDir).to.equal(
        '/var/lib/fleetbook/reports',
      );
    });
  });
});
