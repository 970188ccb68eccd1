/**
 * `fleetbook serve` as an operator runs it: the built binary in a child process, over real loopback HTTP, with
 * a real SQLite file, against an emulator started in this process (time frozen). The callback listener
 * (product.md section 5: persisted before 2xx, deduplicated on requestId + kind, 401 / 400 / 413 / 503), its
 * registration with the service, manual runs over HTTP, SIGTERM and resume, secrets kept out of the logs, and
 * the refusal to start on an invalid playbook. dist/ must be built (`npm test` builds it before mocha runs).
 *
 * The store is read with a second, read-only SQLite connection: the inbox and the runs as they are on disk,
 * not as the daemon reports them.
 */
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { freePort } from '../helpers/ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import { startEmulator, type Delivery, type Emulator } from '../../src/emulator/index.js';
import { emulatorEnv, fleetbook } from '../helpers/cli.js';
import { DaemonProcess } from '../helpers/daemon.js';

type Json = Record<string, unknown>;

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'daemon-listener');

/** The listener's credentials and the daemon's secrets: none may ever reach a log line. */
const CB_USER = 'fleetbook-listener';
const CB_PASS = 'cb-pass-7f3Kq9LmZx2';
const CB_SECRET = 'cb-hmac-secret-Wv42pTn8';
const DAEMON_TOKEN = 'daemon-token-Rk29vXbN5sQ';
const SIGNATURE = 'x-fleetbook-signature';

/** Every failed `serve` of this file, with every daemon, for the secrets check at the end. */
const outputs: { name: string; stdout: () => string; stderr: () => string }[] = [];
const allOutputs = () => [
  ...DaemonProcess.all.map((d) => ({ name: d.name, stdout: () => d.stdout, stderr: () => d.stderr })),
  ...outputs,
];

// ── helpers ─────────────────────────────────────────────────────────────────────────────────────

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a truthy value, which it resolves with. */
async function until<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 5000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

interface Answer {
  status: number;
  headers: Headers;
  body: Json;
}

async function http(
  method: string,
  url: string,
  o: { json?: unknown; raw?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const body = o.raw ?? (o.json === undefined ? undefined : JSON.stringify(o.json));
  const res = await fetch(url, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...o.headers },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await res.text();
  let parsed: Json;
  try {
    parsed = JSON.parse(text) as Json;
  } catch {
    parsed = { text };
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** The sum of the samples of a Prometheus metric whose labels include `labels`. */
function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total += Number(m[3]);
  }
  return total;
}

/** Reads the daemon's store through a read-only connection of its own. */
function query<T>(file: string, sql: string, ...args: unknown[]): T[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all(...args) as T[];
  } finally {
    db.close();
  }
}

const inboxCount = (file: string) => query<{ n: number }>(file, 'SELECT count(*) AS n FROM inbox')[0]?.n ?? 0;

/** Inbox rows of a requestId, and the runs the callbacks of that requestId started. */
function trace(file: string, requestId: string) {
  const inbox = query<{ kind: string; processed_at: string | null; payload_json: string }>(
    file,
    'SELECT kind, processed_at, payload_json FROM inbox WHERE request_id = ?',
    requestId,
  );
  const runs = query<{ id: string; playbook: string; status: string }>(
    file,
    "SELECT id, playbook, status FROM runs WHERE json_extract(trigger_json, '$.requestId') = ?",
    requestId,
  );
  return { inbox, runs };
}

/** Waits until every inbox row of `requestId` is processed (its runs are stored in the same transaction). */
function processed(file: string, requestId: string) {
  return until(`the callback ${requestId} to be processed`, () => {
    const t = trace(file, requestId);
    return t.inbox.length > 0 && t.inbox.every((r) => r.processed_at !== null) ? t : undefined;
  });
}

/** A CarrierService message as the service sends it (public-api-facts.md, "Connectivity callbacks"). */
function carrier(requestId: string, kind = 'suspendResponse', over: Json = {}): Json {
  return {
    username: CB_USER,
    password: CB_PASS,
    requestId,
    deviceIds: [{ id: '490154203237518', kind: 'imei' }],
    deviceResponse: { [kind]: { accountName: '0000123456-00001', succeeded: 1, failed: [] } },
    status: 'Success',
    callbackCount: 1,
    maxCallbackThreshold: 4,
    ...over,
  };
}

/** A Location message: no credentials of the listener's, an HMAC of the body instead. */
function location(requestId: string): string {
  return JSON.stringify({
    username: '',
    password: '',
    requestId,
    locationReportResponse: { accountName: '0000123456-00001', txid: 'tx-1', status: 'COMPLETED' },
    callbackCount: 1,
    maxCallbackThreshold: 4,
  });
}

const sign = (raw: string, secret = CB_SECRET) =>
  `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;

let counter = 0;
const rid = (what: string) => `${what}-${process.pid}-${++counter}`;

// ── the tests ───────────────────────────────────────────────────────────────────────────────────

describe('fleetbook serve: the callback listener and the daemon, as a child process', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let api: Client;
  let tmp: string;
  let env: Record<string, string>;
  const started: DaemonProcess[] = [];
  /** The state file of each daemon started, for the secrets check. */
  const stores: string[] = [];

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'fleetbook-listener-'));
    emu = await startEmulator({ port: 0, timeScale: 0 });
    api = createClient({
      baseUrl: emu.baseUrl,
      clientId: emu.defaults.clientId,
      clientSecret: emu.defaults.clientSecret,
      username: emu.defaults.username,
      password: emu.defaults.password,
    });
    env = {
      ...emulatorEnv(emu),
      FLEETBOOK_CALLBACK_USERNAME: CB_USER,
      FLEETBOOK_CALLBACK_PASSWORD: CB_PASS,
      FLEETBOOK_CALLBACK_SECRET: CB_SECRET,
      FLEETBOOK_DAEMON_TOKEN: DAEMON_TOKEN,
    };
  });

  after(async () => {
    await Promise.all(started.map((d) => d.kill()));
    await api?.close();
    await emu?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  describe('one daemon with callback, manual and long playbooks', () => {
    let daemon: DaemonProcess;
    let state: string;
    let callbackUrl: string;
    let accounts: string[];
    const callbacks = () => `${daemon.url}/callbacks`;

    before(async () => {
      state = join(tmp, 'main', 'state.db');
      stores.push(state);
      const port = await freePort();
      callbackUrl = `http://127.0.0.1:${port}`;
      accounts = emu.defaults.accounts.slice(0, 2);
      daemon = await DaemonProcess.start('main daemon', {
        playbooks: join(FIXTURES, 'main'),
        state,
        port,
        env: {
          ...env,
          // Debug lines too: the secrets check covers every line the daemon can write.
          FLEETBOOK_LOG_LEVEL: 'debug',
          FLEETBOOK_SHUTDOWN_GRACE: '3s',
          FLEETBOOK_CALLBACK_ACCOUNTS: accounts.join(','),
          FLEETBOOK_CALLBACK_URL: callbackUrl,
        },
      });
      started.push(daemon);
      expect(daemon.url).to.equal(`http://127.0.0.1:${port}`);
      const listening = daemon.logs().find((l) => l.message === 'listening');
      expect(listening?.url, 'the "listening" log line names the URL').to.equal(daemon.url);
    });

    it('acknowledges a message sent three times, says duplicate after the first, and starts one run', async () => {
      const id = rid('dup');
      const answers: Answer[] = [];
      // The service re-sends with a higher callbackCount; the catch-all route reads the service from the payload.
      answers.push(await http('POST', `${callbacks()}/CarrierService`, { json: carrier(id) }));
      answers.push(
        await http('POST', `${callbacks()}/CarrierService`, {
          json: carrier(id, undefined, { callbackCount: 2 }),
        }),
      );
      answers.push(await http('POST', callbacks(), { json: carrier(id, undefined, { callbackCount: 3 }) }));
      expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200]);
      expect(answers.map((a) => a.body.status)).to.deep.equal(['stored', 'duplicate', 'duplicate']);

      // Three copies arriving together share one group commit: still one stored.
      const together = rid('dup-together');
      const concurrent = await Promise.all(
        [1, 2, 3].map((n) =>
          http('POST', `${callbacks()}/CarrierService`, {
            json: carrier(together, undefined, { callbackCount: n }),
          }),
        ),
      );
      expect(concurrent.map((a) => a.status)).to.deep.equal([200, 200, 200]);
      expect(concurrent.map((a) => a.body.status).sort()).to.deep.equal(['duplicate', 'duplicate', 'stored']);

      const first = await processed(state, id);
      expect(first.inbox, 'one inbox row').to.have.length(1);
      expect(
        first.runs.map((r) => r.playbook),
        'one run of on-carrier',
      ).to.deep.equal(['on-carrier']);
      const second = await processed(state, together);
      expect(second.inbox).to.have.length(1);
      expect(second.runs.map((r) => r.playbook)).to.deep.equal(['on-carrier']);

      // The stored payload keeps neither the listener's credentials nor the delivery counters.
      const payload = JSON.parse(first.inbox[0]?.payload_json ?? '{}') as Json;
      expect(payload).to.not.have.any.keys('username', 'password', 'callbackCount', 'maxCallbackThreshold');
      expect(payload.requestId).to.equal(id);

      // The run history says the same: one run for the requestId, and it succeeds.
      const runId = first.runs[0]?.id as string;
      const listed = (await http('GET', `${daemon.url}/runs?playbook=on-carrier&limit=1000`))
        .body as unknown as {
        id: string;
        trigger?: { requestId?: string };
      }[];
      expect(listed.filter((r) => r.trigger?.requestId === id).map((r) => r.id)).to.deep.equal([runId]);
      await until('the on-carrier run to succeed', async () => {
        const r = await http('GET', `${daemon.url}/runs/${runId}`);
        return r.body.status === 'succeeded';
      });

      // Dedup is on requestId plus kind: the same requestId reporting something else is a new message.
      const other = await http('POST', `${callbacks()}/CarrierService`, {
        json: carrier(id, 'restoreResponse'),
      });
      expect(other.status).to.equal(200);
      expect(other.body.status).to.equal('stored');
      await until('the restoreResponse run', () => trace(state, id).runs.length === 2);
    });

    it('refuses wrong credentials with 401 and stores nothing; checks the HMAC of Location messages', async () => {
      const before = inboxCount(state);
      const id = rid('auth');
      const wrong: Json[] = [
        carrier(id, undefined, { password: 'not-the-password' }),
        carrier(id, undefined, { username: 'someone-else' }),
        carrier(id, undefined, { username: undefined, password: undefined }),
        carrier(id, undefined, { password: CB_PASS.toUpperCase() }),
      ];
      for (const json of wrong) {
        const a = await http('POST', `${callbacks()}/CarrierService`, { json });
        expect(a.status, JSON.stringify(json)).to.equal(401);
      }
      // A bogus signature is not rescued by correct credentials in the body.
      const forged = await http('POST', `${callbacks()}/CarrierService`, {
        json: carrier(id),
        headers: { [SIGNATURE]: `sha256=${'0'.repeat(64)}` },
      });
      expect(forged.status).to.equal(401);

      const loc = rid('loc');
      const raw = location(loc);
      const unsigned = await http('POST', `${callbacks()}/Location`, { raw });
      expect(unsigned.status, 'a Location message without a signature').to.equal(401);
      const badKey = await http('POST', `${callbacks()}/Location`, {
        raw,
        headers: { [SIGNATURE]: sign(raw, 'some-other-secret') },
      });
      expect(badKey.status, 'signed with another key').to.equal(401);
      const tampered = await http('POST', `${callbacks()}/Location`, {
        raw: raw.replace('COMPLETED', 'FAILED'),
        headers: { [SIGNATURE]: sign(raw) },
      });
      expect(tampered.status, 'a body changed after signing').to.equal(401);
      // The key signs Location messages on the Location route, and nothing else.
      const elsewhere = await http('POST', `${callbacks()}/CarrierService`, {
        raw,
        headers: { [SIGNATURE]: sign(raw) },
      });
      expect(elsewhere.status, 'a signed Location message on another route').to.equal(401);
      const carrierRaw = JSON.stringify(carrier(id, undefined, { username: '', password: '' }));
      const signedCarrier = await http('POST', `${callbacks()}/Location`, {
        raw: carrierRaw,
        headers: { [SIGNATURE]: sign(carrierRaw) },
      });
      expect(signedCarrier.status, 'a signed message that is not a Location one').to.equal(401);
      expect(inboxCount(state), 'nothing stored for a refused message').to.equal(before);
      expect(trace(state, id).runs).to.have.length(0);

      const good = await http('POST', `${callbacks()}/Location`, {
        raw,
        headers: { [SIGNATURE]: sign(raw) },
      });
      expect(good.status).to.equal(200);
      expect(good.body.status).to.equal('stored');
      const t = await processed(state, loc);
      expect(t.runs.map((r) => r.playbook)).to.deep.equal(['on-location']);
      expect(inboxCount(state)).to.equal(before + 1);
    });

    it('answers 400 to malformed messages and 413 to an oversized body, counting each reason', async () => {
      const scrape = async () => (await http('GET', `${daemon.url}/metrics`)).body.text as string;
      const before = await scrape();
      const stored = inboxCount(state);

      const notJson = await http('POST', `${callbacks()}/CarrierService`, { raw: '{"requestId": "x", ' });
      expect(notJson.status, 'malformed JSON').to.equal(400);
      const array = await http('POST', `${callbacks()}/CarrierService`, { json: [carrier(rid('array'))] });
      expect(array.status, 'a JSON array').to.equal(400);
      const scalar = await http('POST', `${callbacks()}/CarrierService`, { raw: '"just a string"' });
      expect(scalar.status, 'a JSON string').to.equal(400);
      const nul = await http('POST', `${callbacks()}/CarrierService`, { raw: 'null' });
      expect(nul.status, 'JSON null').to.equal(400);
      const empty = await http('POST', `${callbacks()}/CarrierService`);
      expect(empty.status, 'no body').to.equal(400);
      const noRequestId = await http('POST', `${callbacks()}/CarrierService`, {
        json: carrier('', undefined, { requestId: undefined }),
      });
      expect(noRequestId.status, 'no requestId').to.equal(400);
      const numericId = await http('POST', `${callbacks()}/CarrierService`, {
        json: carrier('', undefined, { requestId: 12345 }),
      });
      expect(numericId.status, 'a requestId that is not a string').to.equal(400);
      const noKind = await http('POST', `${callbacks()}/CarrierService`, {
        json: { username: CB_USER, password: CB_PASS, requestId: rid('nokind'), status: 'Success' },
      });
      expect(noKind.status, 'no …Response member').to.equal(400);
      const big = carrier(rid('big'), undefined, { padding: 'x'.repeat(1024 * 1024 + 10) });
      const tooLarge = await http('POST', `${callbacks()}/CarrierService`, { json: big });
      expect(tooLarge.status, 'a body over 1 MB').to.equal(413);
      const wrong = await http('POST', `${callbacks()}/CarrierService`, {
        json: carrier(rid('unauth'), undefined, { password: 'nope' }),
      });
      expect(wrong.status).to.equal(401);

      // The daemon is still there and still stores good messages, a content type with a charset included.
      const ok = await http('POST', `${callbacks()}/CarrierService`, { json: carrier(rid('after-bad')) });
      expect(ok.status).to.equal(200);
      const charset = await http('POST', `${callbacks()}/CarrierService`, {
        raw: JSON.stringify(carrier(rid('charset'))),
        headers: { 'content-type': 'application/json; charset=UTF-8' },
      });
      expect(charset.status, 'application/json; charset=UTF-8').to.equal(200);
      expect(inboxCount(state)).to.equal(stored + 2);

      const after = await scrape();
      const delta = (reason: string) =>
        metric(after, 'fleetbook_callbacks_rejected_total', { reason }) -
        metric(before, 'fleetbook_callbacks_rejected_total', { reason });
      expect({
        malformed: delta('malformed'),
        invalid: delta('invalid'),
        too_large: delta('too_large'),
        unauthenticated: delta('unauthenticated'),
      }).to.deep.equal({ malformed: 5, invalid: 3, too_large: 1, unauthenticated: 1 });
    });

    it('shows in /status the processes on its store, itself among them, with their leases', async () => {
      const s = (await http('GET', `${daemon.url}/status`)).body as {
        owners: { role: string; pid: number; self?: boolean; leaseUntil: string; runs: number }[];
        rates?: unknown;
      };
      expect(s.owners.map((o) => [o.role, o.self ?? false])).to.deep.equal([['daemon', true]]);
      // Alone on a SQLite file it shares no rate budget: no shares of 0 requests a second to misread.
      expect(s).not.to.have.property('rates');
      const [me] = s.owners;
      expect(me?.pid).to.be.a('number');
      expect(Date.parse(me?.leaseUntil ?? '')).to.be.greaterThan(Date.now());
    });

    it('registers its listener with the service, and a callback the service sends starts a run', async () => {
      const status = await until('the registrations', async () => {
        const s = (await http('GET', `${daemon.url}/status`)).body as {
          registrations?: { accountName: string; service: string; url: string; ok: boolean }[];
        };
        return s.registrations?.length ? s : undefined;
      });
      const regs = status.registrations ?? [];
      expect(
        regs.filter((r) => !r.ok),
        'failed registrations',
      ).to.deep.equal([]);
      expect(regs.map((r) => `${r.accountName} ${r.service} ${r.url}`).sort()).to.deep.equal(
        accounts
          .flatMap((a) =>
            ['CarrierService', 'Location'].map((s) => `${a} ${s} ${callbackUrl}/callbacks/${s}`),
          )
          .sort(),
      );

      // The service lists the listener, with the credentials it will send back.
      for (const accountName of accounts) {
        const m2m = (await api.callByName('callbacks.list', { accountName })) as Json[];
        expect(m2m).to.deep.include({
          accountName,
          serviceName: 'CarrierService',
          url: `${callbackUrl}/callbacks/CarrierService`,
          username: CB_USER,
          password: CB_PASS,
        });
        const loc = (await api.callByName('locationCallbacks.list', { accountName })) as Json[];
        expect(loc.map((l) => [l.serviceName, l.url])).to.deep.include([
          'Location',
          `${callbackUrl}/callbacks/Location`,
        ]);
      }

      // A suspension answers { requestId } and its result arrives as a CarrierService callback.
      const accountName = accounts[0] as string;
      const list = (await api.callByName('devices.list', {
        accountName,
        currentState: 'active',
      })) as { devices: { deviceIds: { id: string; kind: string }[] }[] };
      const device = list.devices[0]?.deviceIds.find((d) => d.kind === 'imei');
      expect(device, 'an active device').to.not.equal(undefined);
      const { requestId } = (await api.callByName('devices.suspend', {
        accountName,
        devices: [device],
      })) as { requestId: string };

      const t = await processed(state, requestId);
      expect(t.inbox.map((r) => r.kind)).to.deep.equal(['suspendResponse']);
      expect(t.runs.map((r) => r.playbook)).to.deep.equal(['on-carrier']);
      await until('the run of the service callback to succeed', async () => {
        const r = await http('GET', `${daemon.url}/runs/${t.runs[0]?.id}`);
        return r.body.status === 'succeeded';
      });
      await emu.callbacksIdle();
      const deliveries = (await http('GET', `${emu.url}/_emulator/callbacks`)).body.deliveries as Delivery[];
      const d = deliveries.find((x) => x.requestId === requestId);
      expect(d?.state, 'the emulator saw its callback acknowledged').to.equal('delivered');
      expect(d?.url).to.equal(`${callbackUrl}/callbacks/CarrierService`);
      expect(d?.attempts.map((a) => a.status)).to.deep.equal([200]);
    });

    it('starts manual runs only with the bearer token and valid inputs', async () => {
      const runs = `${daemon.url}/playbooks/manual-echo/runs`;
      const good = { json: { inputs: { count: 3 } } };
      const none = await http('POST', runs, good);
      expect(none.status, 'no token').to.equal(401);
      const wrong = await http('POST', runs, {
        ...good,
        headers: { authorization: 'Bearer not-the-token-at-all' },
      });
      expect(wrong.status, 'wrong token').to.equal(401);
      const basic = await http('POST', runs, { ...good, headers: { authorization: DAEMON_TOKEN } });
      expect(basic.status, 'the token without "Bearer"').to.equal(401);

      const auth = { authorization: `Bearer ${DAEMON_TOKEN}` };
      const unknown = await http('POST', `${daemon.url}/playbooks/no-such-playbook/runs`, {
        ...good,
        headers: auth,
      });
      expect(unknown.status, 'unknown playbook').to.equal(404);
      const notManual = await http('POST', `${daemon.url}/playbooks/on-carrier/runs`, {
        json: {},
        headers: auth,
      });
      expect(notManual.status, 'a playbook without on.manual').to.equal(409);
      for (const inputs of [{ count: 'three' }, {}, { count: 3, extra: true }, { count: 1.5 }]) {
        const bad = await http('POST', runs, { json: { inputs }, headers: auth });
        expect(bad.status, `inputs ${JSON.stringify(inputs)}`).to.equal(400);
        expect(bad.body.error).to.be.a('string');
      }
      // A body that says anything but `inputs` is refused, not read as no inputs: long-wait, whose inputs all
      // have defaults, would run on them.
      const longWaits = () =>
        query<{ n: number }>(state, "SELECT count(*) AS n FROM runs WHERE playbook = 'long-wait'")[0]?.n;
      const longBefore = longWaits();
      const bodies: [unknown, string][] = [
        [{ input: { count: 3 } }, 'unknown field "input" in the body: it takes "inputs" and "dryRun"'],
        [
          { inputs: { count: 3 }, dry: true },
          'unknown field "dry" in the body: it takes "inputs" and "dryRun"',
        ],
        [{ inputs: { count: 3 }, dryRun: 'yes' }, 'dryRun must be true or false (a JSON boolean), not "yes"'],
        [[{ count: 3 }], 'the body must be a JSON object: {"inputs": {...}}'],
        [{ inputs: [3] }, 'inputs must be a JSON object'],
      ];
      for (const name of ['manual-echo', 'long-wait'])
        for (const [json, error] of bodies) {
          const bad = await http('POST', `${daemon.url}/playbooks/${name}/runs`, { json, headers: auth });
          expect([bad.status, bad.body], `${name} ${JSON.stringify(json)}`).to.deep.equal([400, { error }]);
        }
      expect(longWaits(), 'no long-wait run stored by a refused body').to.equal(longBefore);

      const before = query<{ n: number }>(
        state,
        "SELECT count(*) AS n FROM runs WHERE playbook = 'manual-echo'",
      );
      expect(before[0]?.n, 'no run stored by a refused request').to.equal(0);

      const ok = await http('POST', runs, { ...good, headers: auth });
      expect(ok.status).to.equal(202);
      const runId = ok.body.runId as string;
      expect(runId).to.be.a('string');
      const summary = await until('the manual run to succeed', async () => {
        const r = await http('GET', `${daemon.url}/runs/${runId}`);
        expect(r.body.status).to.not.equal('failed');
        return r.body.status === 'succeeded' ? r.body : undefined;
      });
      expect(summary).to.include({ runId, playbook: 'manual-echo', status: 'succeeded' });
      const listed = (await http('GET', `${daemon.url}/runs?playbook=manual-echo`)).body as unknown as Json[];
      expect(listed.map((r) => [r.id, r.status, (r.trigger as Json | undefined)?.type])).to.deep.equal([
        [runId, 'succeeded', 'manual'],
      ]);
      const all = (await http('GET', `${daemon.url}/runs`)).body as unknown as Json[];
      expect(all.map((r) => r.id)).to.include(runId);
      expect((await http('GET', `${daemon.url}/runs?limit=1`)).body).to.have.length(1);
      expect((await http('GET', `${daemon.url}/runs/no-such-run`)).status).to.equal(404);
      // A limit that is not one is refused, not read as another: nor one written other than in decimal digits.
      for (const bad of ['abc', '0', '1001', '2.5', '0x10', '1e1', '%2B5', '%205']) {
        const r = await http('GET', `${daemon.url}/runs?limit=${bad}`);
        expect(r.status).to.equal(400);
        expect(r.body).to.deep.equal({
          error: `limit must be an integer from 1 to 1000, got ${JSON.stringify(decodeURIComponent(bad))}`,
        });
      }
      // Filtered by status, as `fleetbook runs list --status`; a status that is none is refused.
      const ids = async (q: string) =>
        ((await http('GET', `${daemon.url}/runs?${q}`)).body as unknown as Json[]).map((r) => r.id);
      expect(await ids('status=succeeded&playbook=manual-echo')).to.deep.equal([runId]);
      expect(await ids('status=failed&playbook=manual-echo')).to.deep.equal([]);
      // A misspelt filter, one given twice or empty, is refused: answered in full, the list would not be what was
      // asked.
      const refused = {
        'status=done': 'status must be one of queued, running, succeeded, failed, cancelled, got "done"',
        'stat=failed': 'unknown query parameter "stat": this path takes playbook, status, limit',
        'playbook=a&playbook=b': 'playbook is given 2 times: give it once',
        'status=': 'status is empty: give it a value, or leave it out',
      };
      for (const [q, error] of Object.entries(refused)) {
        const r = await http('GET', `${daemon.url}/runs?${q}`);
        expect([r.status, r.body], q).to.deep.equal([400, { error }]);
      }
      for (const path of [
        `/runs/${runId}?devices=1`,
        '/status?verbose=1',
        '/metrics?name=fleetbook_runs_total',
        '/healthz?deep=1',
        '/readyz?deep=1',
      ]) {
        const r = await http('GET', `${daemon.url}${path}`);
        const name = path.slice(path.indexOf('?') + 1, path.indexOf('='));
        expect([r.status, r.body], path).to.deep.equal([
          400,
          { error: `unknown query parameter "${name}": this path takes none` },
        ]);
      }
    });

    it('is healthy and ready; on SIGTERM exits 0 and leaves an unfinished run to resume at the next start', async function () {
      this.timeout(45_000);
      expect((await http('GET', `${daemon.url}/healthz`)).status).to.equal(200);
      expect((await http('GET', `${daemon.url}/readyz`)).status).to.equal(200);

      const runId = await daemon.startRun('long-wait', DAEMON_TOKEN);
      // Its first step is checkpointed as ended (a step's row is written as it begins, `running`, too); it is now
      // in the 60 s wait.
      const steps = () =>
        Object.fromEntries(
          query<{ step_key: string; state_json: string }>(
            state,
            'SELECT step_key, state_json FROM run_steps WHERE run_id = ?',
            runId,
          ).map((r) => [r.step_key, (JSON.parse(r.state_json) as { status?: string }).status]),
        );
      await until(
        'the first step of long-wait to be checkpointed as ended, and the wait begun',
        () => {
          const s = steps();
          return s.first === 'succeeded' && s.long === 'waiting';
        },
        30_000,
      );
      expect((await http('GET', `${daemon.url}/runs/${runId}`)).body.status).to.equal('running');

      // SIGTERM lets running steps finish for FLEETBOOK_SHUTDOWN_GRACE (3 s here; docs/daemon.md, "Durability"), then
      // interrupts them. Meanwhile the listener stays up and says it is not ready, and refuses callbacks with
      // Retry-After.
      const stopping = daemon.stop('SIGTERM');
      await until(
        '/readyz to answer 503',
        async () => (await http('GET', `${daemon.url}/readyz`)).status === 503,
      );
      const refused = await http('POST', `${daemon.url}/callbacks/CarrierService`, {
        json: {
          username: CB_USER,
          password: CB_PASS,
          requestId: 'during-shutdown',
          deviceResponse: { suspendResponse: {} },
        },
      });
      expect(refused.status).to.equal(503);
      expect(refused.headers.get('retry-after')).to.equal('5');
      const stopped = await stopping;
      expect(stopped.code, daemon.stderr.slice(-2000)).to.equal(0);
      expect(stopped.ms, 'the 60 s wait is given the whole grace').to.be.at.least(3_000);
      // Out at the end of the grace, not of the wait: the run was interrupted (how soon after the grace the
      // process is out is the machine's).
      expect(
        daemon.logs().filter((l) => l.runId === runId && String(l.message).startsWith('run interrupted; ')),
        'the run interrupted at the end of the grace',
      ).to.have.length(1);
      expect(daemon.logs().map((l) => l.message)).to.include('stopped');

      const row = query<{ status: string; ended_at: string | null }>(
        state,
        'SELECT status, ended_at FROM runs WHERE id = ?',
        runId,
      )[0];
      expect(row, 'the run is still in the store, unfinished').to.deep.equal({
        status: 'running',
        ended_at: null,
      });

      const again = await DaemonProcess.start('restarted daemon', {
        playbooks: join(FIXTURES, 'main'),
        state,
        env,
      });
      started.push(again);
      expect(again.logs().find((l) => l.message === 'resuming unfinished runs')).to.include({ runs: 1 });
      await until('the run to resume', () =>
        again.logs().some((l) => l.message === 'run resumed' && l.runId === runId),
      );
      const status = (await http('GET', `${again.url}/status`)).body as { runs: { running: number } };
      expect(status.runs.running).to.equal(1);
      expect((await http('GET', `${again.url}/runs/${runId}`)).body.status).to.equal('running');
      // The first step, done before the restart, is not done again.
      expect(
        again.logs().filter((l) => l.message === 'before the long wait'),
        'the checkpointed log step ran again',
      ).to.have.length(0);
      // Its stop is not under test: do not wait for the grace again.
      await again.stop('SIGKILL');
    });
  });

  describe('a flood of callbacks past FLEETBOOK_INBOX_LIMIT', () => {
    let daemon: DaemonProcess;
    let state: string;

    before(async () => {
      state = join(tmp, 'flood', 'state.db');
      stores.push(state);
      daemon = await DaemonProcess.start('flood daemon', {
        playbooks: join(FIXTURES, 'flood'),
        state,
        env: { ...env, FLEETBOOK_INBOX_LIMIT: '50', FLEETBOOK_MAX_RUNS: '64' },
      });
      started.push(daemon);
    });

    after(async () => {
      await daemon?.stop('SIGTERM').catch(() => daemon.kill());
    });

    it('answers 503 with Retry-After when the backlog is full, and processes every acknowledged message once', async () => {
      // The pool runs 64 at a time, 2 s each (32 a second), and holds up to 1000 queued: past that the matcher
      // leaves events in the inbox, the backlog reaches the bound and the listener refuses. The flood goes on
      // until the refusals are steady (200 in a row), at most 5000 messages.
      const answers = new Map<string, { status: number; retryAfter: string | null; body: Json }>();
      let sent = 0;
      let refusedInARow = 0;
      const began = Date.now();
      await Promise.all(
        Array.from({ length: 48 }, async () => {
          while (sent < 5000 && refusedInARow < 200) {
            const id = `flood-${sent++}`;
            const a = await http('POST', `${daemon.url}/callbacks/CarrierService`, { json: carrier(id) });
            answers.set(id, { status: a.status, retryAfter: a.headers.get('retry-after'), body: a.body });
            refusedInARow = a.status === 503 ? refusedInARow + 1 : 0;
          }
        }),
      );
      const floodMs = Date.now() - began;
      expect(refusedInARow, `no steady 503s after ${sent} messages in ${floodMs} ms`).to.be.at.least(200);

      const acked = [...answers].filter(([, a]) => a.status === 200).map(([id]) => id);
      const refused = [...answers].filter(([, a]) => a.status === 503);
      const other = [...answers].filter(([, a]) => a.status !== 200 && a.status !== 503);
      expect(
        other.map(([id, a]) => `${id}: ${a.status}`),
        'answers other than 200 and 503',
      ).to.deep.equal([]);
      for (const [id, a] of refused) expect(a.retryAfter, `Retry-After of ${id}`).to.match(/^[1-9][0-9]*$/);
      for (const id of acked) expect(answers.get(id)?.body.status).to.equal('stored');

      // Nothing answered 503 is in the store; everything answered 200 is.
      const inbox = new Set(
        query<{ request_id: string }>(state, 'SELECT request_id FROM inbox').map((r) => r.request_id),
      );
      expect(
        refused.filter(([id]) => inbox.has(id)).map(([id]) => id),
        'stored though answered 503',
      ).to.deep.equal([]);
      expect(
        acked.filter((id) => !inbox.has(id)),
        'answered 200 but not stored',
      ).to.deep.equal([]);

      const rss = metric(
        (await http('GET', `${daemon.url}/metrics`)).body.text as string,
        'fleetbook_process_resident_memory_bytes',
      );
      expect(rss, 'resident memory').to.be.within(1, 300 * 1024 * 1024);

      // Every acknowledged message is processed, eventually: as the runs drain (32 a second), the pool's
      // queue falls back under 1000 within a few seconds and the matcher must take the backlog again.
      const pending = () =>
        query<{ n: number }>(state, 'SELECT count(*) AS n FROM inbox WHERE processed_at IS NULL')[0]?.n ?? 0;
      const deadline = Date.now() + 15_000;
      while (pending() > 0 && Date.now() < deadline) await sleep(200);
      const status = (await http('GET', `${daemon.url}/status`)).body as {
        inboxBacklog: number;
        runs: { running: number; queued: number };
      };
      expect(
        pending(),
        `acknowledged callbacks still unprocessed 15 s after the flood (status: ${JSON.stringify(status)})`,
      ).to.equal(0);

      // Exactly one run each.
      const runs = query<{ request_id: string; n: number }>(
        state,
        `SELECT json_extract(trigger_json, '$.requestId') AS request_id, count(*) AS n FROM runs
         WHERE playbook = 'slow' GROUP BY request_id`,
      );
      const byId = new Map(runs.map((r) => [r.request_id, r.n]));
      expect(
        acked.filter((id) => byId.get(id) !== 1),
        'acknowledged without exactly one run',
      ).to.deep.equal([]);
      expect(
        runs.filter((r) => !answers.has(r.request_id) || answers.get(r.request_id)?.status !== 200),
      ).to.deep.equal([]);

      // The service sends a refused message again later: once there is room it is stored.
      const [retryId] = refused[0] ?? [];
      const retried = await until('a refused message to be accepted when sent again', async () => {
        const a = await http('POST', `${daemon.url}/callbacks/CarrierService`, {
          json: carrier(String(retryId), undefined, { callbackCount: 2 }),
        });
        return a.status === 200 ? a : undefined;
      });
      expect(retried.body.status).to.equal('stored');

      const after = metric(
        (await http('GET', `${daemon.url}/metrics`)).body.text as string,
        'fleetbook_callbacks_rejected_total',
        { reason: 'overloaded' },
      );
      expect(after).to.be.at.least(refused.length);
    });
  });

  describe('a playbook directory with an invalid playbook', () => {
    it('makes serve exit 2 listing every error as file:line:col', async () => {
      const dir = join(FIXTURES, 'invalid');
      const stateFile = join(tmp, 'invalid', 'state.db');
      const r = await fleetbook(
        ['serve', '--playbooks', dir, '--listen', '127.0.0.1:0', '--state', stateFile],
        env,
      );
      outputs.push({ name: 'serve with invalid playbooks', stdout: () => r.stdout, stderr: () => r.stderr });
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr).to.include('4 error(s)');
      const lines = r.stderr.split('\n').filter((l) => l.startsWith(dir));
      expect(lines).to.deep.equal([
        `${dir}/bad-cron.yaml:6:11: invalid cron expression "0 25 * * *": hour 25 is out of range (0-23) [cron]`,
        `${dir}/bad-cron.yaml:9:11: unknown action \`devices.lst\` (did you mean \`devices.list\`?) [unknown-action]`,
        `${dir}/bad-step.yaml:10:23: invalid expression: Unexpected token: EOF [expression]`,
        `${dir}/bad-step.yaml:12:11: wait "soon" is not valid: A duration: 500ms, 2s, 5m, 2h, 1d, or a sum such as 1h30m (each unit once, largest first). [duration]`,
      ]);
      expect(existsSync(stateFile), 'no store opened').to.equal(false);

      // Two playbooks of one name (each valid alone), as `fleetbook validate` reports them.
      const twins = join(import.meta.dirname, '..', 'fixtures', 'playbooks', 'duplicate-name');
      const d = await fleetbook(
        ['serve', '--playbooks', twins, '--listen', '127.0.0.1:0', '--state', join(tmp, 'twins', 'state.db')],
        env,
      );
      expect(d.code, d.stderr).to.equal(2);
      // A playbook that names secrets: not started while one is unset, whichever way it is named.
      const secrets = join(FIXTURES, 'secrets');
      const s = await fleetbook(
        [
          'serve',
          '--playbooks',
          secrets,
          '--listen',
          '127.0.0.1:0',
          '--state',
          join(tmp, 'secrets', 'state.db'),
        ],
        { ...env, FLEETBOOK_SECRET_TEAM_WEBHOOK: 'https://hooks.example.com/team' },
      );
      expect(s.code, s.stderr).to.equal(2);
      expect(s.stderr.split('\n').filter((l) => l.startsWith(secrets))).to.deep.equal([
        `${secrets}/notify-team.yaml: playbook notify-team reads secrets.TEAM_TOKEN, not set: set FLEETBOOK_SECRET_TEAM_TOKEN`,
      ]);
      expect(d.stderr.split('\n').filter((l) => l.startsWith(twins))).to.deep.equal([
        `${twins}/b-report-copy.yaml:3:7: playbook name \`nightly-report\` is also the name of ${twins}/a-report.yaml [duplicate-name]`,
      ]);
    });
  });

  describe('secrets', () => {
    // A daemon of its own, with debug lines, that registers its listener and takes what carries a secret: a
    // callback with the listener's credentials (and one with wrong ones), a signed Location message, a manual
    // run with the bearer token (and one with a wrong one), then SIGTERM; and a `serve` refused. The check
    // reads these whether or not the tests before it ran, and every other daemon of this file that did.
    before(async () => {
      const state = join(tmp, 'secrets-check', 'state.db');
      stores.push(state);
      const port = await freePort();
      const daemon = await DaemonProcess.start('secrets daemon', {
        playbooks: join(FIXTURES, 'main'),
        state,
        port,
        env: {
          ...env,
          FLEETBOOK_LOG_LEVEL: 'debug',
          FLEETBOOK_CALLBACK_ACCOUNTS: emu.defaults.accounts.slice(2, 3).join(','),
          FLEETBOOK_CALLBACK_URL: `http://127.0.0.1:${port}`,
        },
      });
      started.push(daemon);
      await until('the registrations', async () => {
        const s = (await http('GET', `${daemon.url}/status`)).body as { registrations?: unknown[] };
        return s.registrations?.length;
      });
      const callbacks = `${daemon.url}/callbacks`;
      const id = rid('secrets');
      expect((await http('POST', `${callbacks}/CarrierService`, { json: carrier(id) })).status).to.equal(200);
      const wrong = carrier(rid('secrets-wrong'), undefined, { password: 'not-the-password' });
      expect((await http('POST', `${callbacks}/CarrierService`, { json: wrong })).status).to.equal(401);
      const loc = rid('secrets-loc');
      const raw = location(loc);
      const signed = await http('POST', `${callbacks}/Location`, {
        raw,
        headers: { [SIGNATURE]: sign(raw) },
      });
      expect(signed.status).to.equal(200);
      const runs = `${daemon.url}/playbooks/manual-echo/runs`;
      const json = { inputs: { count: 1 } };
      const refused = await http('POST', runs, {
        json,
        headers: { authorization: `Bearer ${DAEMON_TOKEN}x` },
      });
      expect(refused.status).to.equal(401);
      const ok = await http('POST', runs, { json, headers: { authorization: `Bearer ${DAEMON_TOKEN}` } });
      expect(ok.status).to.equal(202);
      await processed(state, id);
      await processed(state, loc);
      await until('the manual run to end', async () => {
        const r = await http('GET', `${daemon.url}/runs/${String(ok.body.runId)}`);
        return r.body.status === 'succeeded' || r.body.status === 'failed';
      });
      await daemon.stop('SIGTERM');
      const r = await fleetbook(
        [
          'serve',
          '--playbooks',
          join(FIXTURES, 'invalid'),
          '--listen',
          '127.0.0.1:0',
          '--state',
          join(tmp, 'secrets-check', 'refused.db'),
        ],
        env,
      );
      outputs.push({
        name: 'serve refused, for the secrets check',
        stdout: () => r.stdout,
        stderr: () => r.stderr,
      });
      expect(r.code, r.stderr).to.equal(2);
    });

    it('appear in no output of any daemon, nor in the store', function () {
      const secrets = {
        'callback password': CB_PASS,
        'daemon token': DAEMON_TOKEN,
        'callback secret': CB_SECRET,
        'client secret': emu.defaults.clientSecret,
        'user password': emu.defaults.password,
      };
      expect(allOutputs().map((o) => o.name)).to.include.members([
        'secrets daemon',
        'serve refused, for the secrets check',
      ]);
      const leaks: string[] = [];
      for (const o of allOutputs()) {
        const lines = `${o.stderr()}\n${o.stdout()}`.split('\n');
        for (const [what, value] of Object.entries(secrets))
          for (const line of lines)
            if (line.includes(value)) leaks.push(`${o.name}, ${what}: ${line.slice(0, 300)}`);
      }
      const stored = stores.flatMap((file) => [
        ...query<{ t: string }>(file, 'SELECT payload_json AS t FROM inbox'),
        ...query<{ t: string | null }>(
          file,
          "SELECT coalesce(trigger_json, '') || coalesce(inputs_json, '') || coalesce(event_json, '') || coalesce(summary_json, '') || coalesce(error, '') AS t FROM runs",
        ),
      ]);
      expect(stored.length, 'rows read from the stores').to.be.greaterThan(0);
      for (const [what, value] of Object.entries(secrets))
        for (const row of stored)
          if (row.t?.includes(value)) leaks.push(`store, ${what}: ${row.t.slice(0, 300)}`);
      expect(leaks).to.deep.equal([]);
      // The check read something: every daemon wrote its start.
      expect(allOutputs().every((o) => o.stderr().length > 0)).to.equal(true);
    });
  });
});

describe('fleetbook serve with nothing configured (npm start)', function () {
  this.timeout(60_000);

  it('runs the example playbooks on its embedded emulator: runs complete within 30 seconds', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'fleetbook-zero-config-'));
    const playbooks = join(import.meta.dirname, '..', '..', 'playbooks');
    const d = await DaemonProcess.start('zero-config', {
      playbooks,
      state: join(tmp, 'state.db'),
      env: { FLEETBOOK_LOG_LEVEL: 'info' },
    });
    try {
      const began = Date.now();
      const runs = await until(
        'a run of an example playbook to succeed',
        async () => {
          const list = (await (await fetch(`${d.url}/runs`)).json()) as {
            playbook: string;
            status: string;
          }[];
          return list.some((r) => r.status === 'succeeded') ? list : undefined;
        },
        30_000,
      );
      expect(Date.now() - began).to.be.below(30_000);
      expect(runs.map((r) => r.playbook)).to.include('suspend-on-overuse');
      expect(runs.filter((r) => r.status === 'failed')).to.deep.equal([]);
      expect(d.logs().some((l) => l.message === 'callback processed')).to.equal(true);
      // Every line about a run names it and its playbook.
      const aboutRuns = d.logs().filter((l) => /^(run|step) /.test(String(l.message)));
      expect(aboutRuns.length).to.be.greaterThan(0);
      for (const l of aboutRuns) expect(l, String(l.message)).to.include.keys('runId', 'playbook');
    } finally {
      await d.stop('SIGKILL');
      await rm(tmp, { recursive: true, force: true });
    }
  });

  it('registers on its embedded emulator only the accounts FLEETBOOK_CALLBACK_ACCOUNTS names, when it names some', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'fleetbook-embedded-accounts-'));
    const d = await DaemonProcess.start('embedded, named accounts', {
      playbooks: join(import.meta.dirname, '..', '..', 'playbooks'),
      state: join(tmp, 'state.db'),
      env: {
        FLEETBOOK_CALLBACK_ACCOUNTS: '0000123456-00002',
        FLEETBOOK_CALLBACK_URL: 'https://fleetbook.example.com',
        FLEETBOOK_LOG_LEVEL: 'warn',
      },
    });
    try {
      const status = (await (await fetch(`${d.url}/status`)).json()) as {
        registrations: { accountName: string; ok: boolean }[];
      };
      expect([...new Set(status.registrations.map((r) => `${r.accountName} ${r.ok}`))]).to.deep.equal([
        '0000123456-00002 true',
      ]);
      // The URL the service would post to is not the embedded emulator's: said, not silently dropped.
      expect(d.logs().map((l) => l.message)).to.include(
        'FLEETBOOK_CALLBACK_URL is not used with the embedded emulator, which posts to this daemon',
      );
    } finally {
      await d.stop('SIGKILL');
      await rm(tmp, { recursive: true, force: true });
    }
  });
});
