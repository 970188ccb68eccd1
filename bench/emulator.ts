/**
 * Emulator throughput: simple authenticated requests per second over loopback, so that the emulator is
 * never the bottleneck of the engine's benchmarks (issue 3 acceptance: at least 5,000/s).
 *
 * The emulator and the load generator share this process, as they do when the engine benchmarks run
 * against the embedded emulator; a raw undici Pool at concurrency 32 sends `location.getReportStatus`
 * (auth, session, account and report checks: the work of a typical small call) for a fixed time.
 */
import { Pool } from 'undici';
import { startEmulator } from '../src/emulator/index.js';
import type { BenchRow } from './types.js';

const CONCURRENCY = 32;
const WARMUP_MS = 500;
const MEASURE_MS = 3000;
const TARGET = 5000;

async function json(
  pool: Pool,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: string,
) {
  const res = await pool.request({ method, path, headers, body: body ?? null });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${method} ${path}: HTTP ${res.statusCode} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

export async function benchEmulator(): Promise<BenchRow[]> {
  const emu = await startEmulator({ timeScale: 0, devicesPerAccount: 100 });
  const pool = new Pool(emu.url, { connections: CONCURRENCY, pipelining: 1 });
  try {
    const basic = Buffer.from(`${emu.defaults.clientId}:${emu.defaults.clientSecret}`).toString('base64');
    const token = await json(
      pool,
      'POST',
      '/api/ts/v1/oauth2/token',
      { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      'grant_type=client_credentials',
    );
    const bearer = {
      authorization: `Bearer ${String(token.access_token)}`,
      'content-type': 'application/json',
    };
    const login = await json(
      pool,
      'POST',
      '/api/m2m/v1/session/login',
      bearer,
      JSON.stringify({ username: emu.defaults.username, password: emu.defaults.password }),
    );
    const headers = { ...bearer, 'x-m2m-token': String(login.sessionToken) };
    const account = emu.defaults.accounts[0] as string;
    const list = await json(
      pool,
      'POST',
      '/api/m2m/v1/devices/actions/list',
      headers,
      JSON.stringify({ accountName: account, maxNumberOfDevices: 10 }),
    );
    const devices = (list.devices as { deviceIds: { id: string; kind: string }[] }[]).slice(0, 5);
    const report = await json(
      pool,
      'POST',
      '/api/loc/v1/locationreports',
      headers,
      JSON.stringify({
        accountName: account,
        deviceList: devices.map((d) => ({ id: d.deviceIds[0]!.id, kind: 'imei' })),
      }),
    );
    const path = `/api/loc/v1/locationreports/${account}/report/${String(report.txid)}/status`;

    let count = 0;
    let errors = 0;
    let measuring = false;
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const res = await pool.request({ method: 'GET', path, headers });
        await res.body.dump();
        if (!measuring) continue;
        if (res.statusCode === 200) count++;
        else errors++;
      }
    };
    const workers = Array.from({ length: CONCURRENCY }, worker);
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    measuring = true;
    const began = performance.now();
    await new Promise((r) => setTimeout(r, MEASURE_MS));
    measuring = false;
    const elapsed = (performance.now() - began) / 1000;
    stop = true;
    await Promise.all(workers);
    const rate = count / elapsed;
    return [
      {
        id: 'E1',
        measure: `emulator: simple requests/s on loopback (GET report status, concurrency ${CONCURRENCY}${errors ? `, ${errors} errors` : ''})`,
        value: `${Math.round(rate)}/s`,
        target: `>= ${TARGET}/s`,
        pass: errors === 0 && rate >= TARGET,
      },
    ];
  } finally {
    await pool.close();
    await emu.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await benchEmulator()) console.log(row);
}
