/**
 * The hand-written side of P1 and P2: the same API calls as the engine's playbook (P1: each suspend, then the
 * request status that confirms it), made with a bare undici
 * Pool at the same concurrency, no engine. Prints { ms, cpuMs, maxRssMb, calls, devices }. Plain JavaScript run by
 * plain node, as the engine side is (engine.mjs).
 *
 *   raw.mjs suspend BASE_URL CLIENT_ID SECRET USER PASSWORD ACCOUNT BATCH CONCURRENCY
 *   raw.mjs report  BASE_URL CLIENT_ID SECRET USER PASSWORD ACCOUNT
 */
import { Pool } from 'undici';
import { peakRssMb } from './peak-rss.mjs';
const [mode, baseUrl, clientId, clientSecret, username, password, account, batchArg, concArg] =
  process.argv.slice(2);
const url = new URL(baseUrl);
const pool = new Pool(url.origin, { connections: 64 });
const base = url.pathname.replace(/\/$/, '');
let calls = 0;
let headers = {};
async function send(method, path, body, extra = {}, replay = true) {
  calls++;
  const res = await pool.request({
    method,
    path: base + path,
    headers: { 'content-type': 'application/json', ...headers, ...extra },
    body: body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  // An expired session (a long run at a high time scale): log in again, once, and send again, as a client must.
  if (res.statusCode === 400 && replay && text.includes('Session has expired')) {
    await login();
    return send(method, path, body, extra, false);
  }
  if (res.statusCode >= 300 && res.statusCode !== 202)
    throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
  return { status: res.statusCode, json: text ? JSON.parse(text) : {} };
}
const start = performance.now();
const cpuStart = process.cpuUsage();
const basic = Buffer.from(`${clientId}:${clientSecret}`).toString('base64');
const token = await send('POST', '/ts/v1/oauth2/token', 'grant_type=client_credentials', {
  authorization: `Basic ${basic}`,
  'content-type': 'application/x-www-form-urlencoded',
});
headers = { authorization: `Bearer ${token.json.access_token}` };
let renewing;
/** The session login; logins asked for at once share one. */
function login() {
  renewing ??= send('POST', '/m2m/v1/session/login', { username, password }, {}, false).then((r) => {
    headers['x-m2m-token'] = r.json.sessionToken;
    renewing = undefined;
  });
  return renewing;
}
await login();
async function listImeis() {
  const out = [];
  let last;
  for (;;) {
    const page = await send('POST', '/m2m/v1/devices/actions/list', {
      accountName: account,
      currentState: 'active',
      ...(last ? { largestDeviceIdSeen: last } : {}),
    });
    for (const d of page.json.devices) {
      const imei = d.deviceIds.find((x) => x.kind === 'imei');
      if (imei) out.push({ id: imei.id, kind: 'imei' });
      const first = d.deviceIds[0]?.id ?? '';
      if (last === undefined || first > last) last = first;
    }
    if (!page.json.hasMoreData || page.json.devices.length === 0) return out;
  }
}
async function report(devices, cacheMode) {
  const results = new Map();
  const txids = [];
  for (let i = 0; i < devices.length; i += 10_000) {
    const r = await send('POST', '/loc/v1/locationreports', {
      accountName: account,
      deviceList: devices.slice(i, i + 10_000),
      cacheMode,
    });
    txids.push(r.json.txid);
  }
  for (const txid of txids) {
    for (;;) {
      const s = await send('GET', `/loc/v1/locationreports/${account}/report/${txid}/status`);
      if (s.json.status === 'COMPLETED') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    for (let startIndex = 0; ;) {
      const page = await send('GET', `/loc/v1/locationreports/${account}/report/${txid}/index/${startIndex}`);
      for (const e of page.json.devLocationList) results.set(e.msid, e.error?.type ?? '');
      startIndex += page.json.devLocationList.length;
      if (!page.json.hasMoreData || page.json.devLocationList.length === 0) break;
    }
  }
  return results;
}
let devices = 0;
if (mode === 'suspend') {
  const all = await listImeis();
  const batch = Number(batchArg);
  const batches = [];
  for (let i = 0; i < all.length; i += batch) batches.push(all.slice(i, i + batch));
  let next = 0;
  await Promise.all(
    Array.from({ length: Number(concArg) }, async () => {
      while (next < batches.length) {
        const b = batches[next++];
        const accepted = await send('POST', '/m2m/v1/devices/actions/suspend', {
          accountName: account,
          devices: b.map((d) => ({ deviceIds: [d] })),
        });
        // The confirming call the engine makes without a listener: the request's status, until it is final.
        for (;;) {
          const s = await send(
            'GET',
            `/m2m/v1/accounts/${account}/requests/${accepted.json.requestId}/status`,
          );
          if (s.json.status !== 'Pending') break;
          await new Promise((r) => setTimeout(r, 50));
        }
        devices += b.length;
      }
    }),
  );
} else {
  const all = await listImeis();
  const first = await report(all, '0');
  const misses = all.filter((d) => first.get(d.id) === 'SVC CACHE UNAVAILABLE');
  const second = await report(misses, '1');
  for (const [k, v] of second) first.set(k, v);
  devices = first.size;
}
const ms = performance.now() - start;
const cpu = process.cpuUsage(cpuStart);
const cpuMs = (cpu.user + cpu.system) / 1000;
await pool.close();
process.stdout.write(JSON.stringify({ ms, cpuMs, maxRssMb: peakRssMb(), calls, devices }));
