/**
 * P1M, one side: P1's calls (token, login, the device listing, suspends of 500 devices 4 at a time) in-process
 * against undici's MockAgent, so that nothing but the side itself uses the CPU. Prints { ms, cpuMs, devices }.
 * The engine side runs the P1 playbook through the built modules of dist/, the raw side is raw.mjs's loop.
 * Each process makes its first run, cold, as `fleetbook run` makes it (the figures of the row), then the same run
 * three times more, and gives the last as `warm`: by then its code is compiled and optimised (the second run still
 * spends on that), so the difference from the first is what a cold run pays for it.
 *
 *   mocked.mjs engine|raw
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockAgent } from 'undici';
import { createClient } from '../../dist/api/client.js';
import { loadPlaybook } from '../../dist/playbook/load.js';
import { StoreDeviceLocks } from '../../dist/runner/locks.js';
import { runPlaybook } from '../../dist/runner/runner.js';
import { Lease } from '../../dist/store/lease.js';
import { SqliteStore } from '../../dist/store/sqlite.js';

const DEVICES = 18_586;
const ACCOUNT = '0583964556-00001';
const ORIGIN = 'http://service.test';
const mode = process.argv[2];

/** A device record shaped like the emulator's, its IMEI first: the listing pages by the first identifier. */
const imeis = Array.from({ length: DEVICES }, (_, i) => String(356758880000000 + i * 7));
const record = (imei) => ({
  deviceIds: [
    { id: imei, kind: 'imei' },
    { id: `8901${imei}1`, kind: 'iccid' },
  ],
  accountName: ACCOUNT,
  state: 'active',
  connected: true,
  ipAddress: '10.0.0.1',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastActivationDate: '2026-01-01T00:00:00.000Z',
  billingCycleEndDate: '2026-02-01T00:00:00.000Z',
  carrierInformations: [{ carrierName: 'Carrier', servicePlan: 'IOT-1GB', state: 'active' }],
  extendedAttributes: [{ key: 'site', value: 'north' }],
  groupNames: ['fleet'],
});

const agent = new MockAgent({ connections: 64 });
agent.disableNetConnect();
const service = agent.get(ORIGIN);
const json = { headers: { 'content-type': 'application/json' } };
service
  .intercept({ path: '/api/ts/v1/oauth2/token', method: 'POST' })
  .reply(200, { access_token: 'token', token_type: 'Bearer', expires_in: 3600, scope: 'all' }, json)
  .persist();
service
  .intercept({ path: '/api/m2m/v1/session/login', method: 'POST' })
  .reply(200, { sessionToken: 'session', expiresIn: 1200 }, json)
  .persist();
service
  .intercept({ path: '/api/m2m/v1/devices/actions/list', method: 'POST' })
  .reply(
    200,
    ({ body }) => {
      const after = JSON.parse(body).largestDeviceIdSeen;
      const found = after === undefined ? 0 : imeis.findIndex((id) => id > after);
      const from = found < 0 ? DEVICES : found;
      return { devices: imeis.slice(from, from + 500).map(record), hasMoreData: from + 500 < DEVICES };
    },
    json,
  )
  .persist();
service
  .intercept({ path: '/api/m2m/v1/devices/actions/suspend', method: 'POST' })
  .reply(200, { requestId: '00000000-0000-4000-8000-000000000000' }, json)
  .persist();
// The request status that confirms each suspend (no listener in-process).
service
  .intercept({ path: /^\/api\/m2m\/v1\/accounts\/[^/]+\/requests\/[^/]+\/status$/, method: 'GET' })
  .reply(200, { requestId: '00000000-0000-4000-8000-000000000000', status: 'Success' }, json)
  .persist();

/** What the side leaves behind to remove, after the timed span. */
let cleanup = async () => undefined;

async function engine() {
  const file = join(import.meta.dirname, '..', 'playbooks', 'p1-suspend.yaml');
  const loaded = loadPlaybook(readFileSync(file, 'utf8'), file);
  if (!loaded.playbook) throw new Error(JSON.stringify(loaded.diagnostics));
  const local = { requestsPerSecond: 100_000, concurrency: 64 };
  const client = createClient({
    baseUrl: `${ORIGIN}/api`,
    clientId: 'client',
    clientSecret: 'secret',
    username: 'user',
    password: 'password',
    dispatcher: agent,
    rates: { m2m: local, loc: local, subsc: local, dm: local, oauth: local },
  });
  const dir = mkdtempSync(join(tmpdir(), 'fleetbook-bench-'));
  const store = new SqliteStore(join(dir, 'state.db'));
  // As `fleetbook run`: a lease on the store, and per-device locks held in it.
  const lease = new Lease({ ...LEASE, store });
  const locks = new StoreDeviceLocks(store, lease.id);
  cleanup = async () => {
    await lease.release();
    store.close();
    rmSync(dir, { recursive: true });
  };
  return async () => {
    const summary = await runPlaybook(loaded.playbook, {
      client,
      store,
      owner: lease.id,
      locks,
      inputs: { account: ACCOUNT },
    });
    if (summary.status !== 'succeeded') throw new Error(summary.error);
    return summary.devices.succeeded;
  };
}

const LEASE = {
  role: 'run',
  exclusive: false,
  leaseMs: 15_000,
  describe: 'the bench state file',
  onLost: (e) => {
    throw e;
  },
};

/** raw.mjs's loop, on the same dispatcher. */
function raw() {
  let headers = {};
  const send = async (path, body, extra = {}) => {
    const get = extra === 'GET';
    const res = await agent.request({
      origin: ORIGIN,
      method: get ? 'GET' : 'POST',
      path: `/api${path}`,
      headers: { 'content-type': 'application/json', ...headers, ...(get ? {} : extra) },
      body: get ? null : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${path}: ${res.statusCode} ${text}`);
    return JSON.parse(text);
  };
  return async () => {
    const token = await send('/ts/v1/oauth2/token', 'grant_type=client_credentials', {
      authorization: `Basic ${Buffer.from('client:secret').toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    });
    headers = { authorization: `Bearer ${token.access_token}` };
    const login = await send('/m2m/v1/session/login', { username: 'user', password: 'password' });
    headers['x-m2m-token'] = login.sessionToken;
    const all = [];
    let last;
    for (;;) {
      const page = await send('/m2m/v1/devices/actions/list', {
        accountName: ACCOUNT,
        currentState: 'active',
        ...(last ? { largestDeviceIdSeen: last } : {}),
      });
      for (const d of page.devices) {
        const imei = d.deviceIds.find((x) => x.kind === 'imei');
        if (imei) all.push({ id: imei.id, kind: 'imei' });
        const first = d.deviceIds[0]?.id ?? '';
        if (last === undefined || first > last) last = first;
      }
      if (!page.hasMoreData || page.devices.length === 0) break;
    }
    const batches = [];
    for (let i = 0; i < all.length; i += 500) batches.push(all.slice(i, i + 500));
    let next = 0;
    let devices = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < batches.length) {
          const b = batches[next++];
          const accepted = await send('/m2m/v1/devices/actions/suspend', {
            accountName: ACCOUNT,
            devices: b.map((d) => ({ deviceIds: [d] })),
          });
          await send(`/m2m/v1/accounts/${ACCOUNT}/requests/${accepted.requestId}/status`, null, 'GET');
          devices += b.length;
        }
      }),
    );
    return devices;
  };
}

const once = mode === 'engine' ? await engine() : raw();

/** One run, timed: its outcome is kept until the clock has stopped. */
async function timed() {
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  const outcome = await once().then(
    (devices) => ({ devices }),
    (error) => ({ error }),
  );
  const cpu = process.cpuUsage(cpuStart);
  return { ms: performance.now() - start, cpuMs: (cpu.user + cpu.system) / 1000, ...outcome };
}

// Then the temporary store goes, whatever happened.
const cold = await timed();
let warm = cold;
for (let i = 0; i < 3 && !warm.error; i++) warm = await timed();
await cleanup();
if (cold.error ?? warm.error) throw cold.error ?? warm.error;
process.stdout.write(
  JSON.stringify({
    ms: cold.ms,
    cpuMs: cold.cpuMs,
    devices: cold.devices,
    warm: { ms: warm.ms, cpuMs: warm.cpuMs, devices: warm.devices },
  }),
);
