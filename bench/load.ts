/**
 * The load of the daemon benchmarks and what they read back: DeviceUsage callbacks posted by bench/poster.ts,
 * in batches and warm-up windows; the daemons' /status and /metrics, summed over the replicas; and the rows
 * of the store (a SQLite file or a PostgreSQL database) the daemons shared.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { request } from 'undici';
import { createClient } from '../src/api/client.js';
import { isPostgresUrl } from '../src/util/state-url.js';
import type { DaemonProcess } from '../test/helpers/daemon.js';
import { CB_PASS, CB_USER, cpuMs, type EmulatorProcess } from './processes.js';
import { postRequest, type Poster } from './poster.js';

/** A callback to post: its requestId, and the request's bytes. */
export interface Post {
  id: string;
  request: Buffer;
}

/** The callbacks `${prefix}-<i>` of trigger `trigger`, the i-th naming the devices `imeis(i)`, to `url`'s host. */
export function callbacks(
  url: string,
  prefix: string,
  n: number,
  trigger: string,
  account: string,
  imeis: (i: number) => string[],
): Post[] {
  return Array.from({ length: n }, (_, i) => {
    const id = `${prefix}-${i}`;
    const body = JSON.stringify({
      username: CB_USER,
      password: CB_PASS,
      requestId: id,
      deviceResponse: {
        alertServiceResponse: {
          triggerName: trigger,
          accountName: account,
          payAsYouGo: { deviceIds: imeis(i).map((id) => ({ id, kind: 'IMEI' })) },
        },
      },
    });
    return { id, request: postRequest(url, '/callbacks/DeviceUsage', Buffer.from(body)) };
  });
}

export interface Batch {
  ms: number;
  /** Per request, in ms, sorted. */
  latencies: Float64Array;
  /** requestIds answered 200 `stored`. */
  stored: Set<string>;
  /** Any other answer, `status body` → count. */
  other: Map<string, number>;
}

/** Posts every request, as many at a time as the poster has senders; from the first post to the last answer. */
export async function post(poster: Poster, posts: Post[]): Promise<Batch> {
  const latencies = new Float64Array(posts.length);
  const stored = new Set<string>();
  const other = new Map<string, number>();
  const count = (key: string) => other.set(key, (other.get(key) ?? 0) + 1);
  let next = 0;
  const began = performance.now();
  await poster.each(async (send) => {
    for (let i = next++; i < posts.length; i = next++) {
      const p = posts[i] as Post;
      const t0 = performance.now();
      try {
        const res = await send(p.request);
        latencies[i] = performance.now() - t0;
        if (res.status === 200 && res.body.includes('"stored"')) stored.add(p.id);
        else count(`${res.status} ${res.body}`);
      } catch (e) {
        latencies[i] = performance.now() - t0;
        count(`network ${(e as Error).message}`);
      }
    }
  });
  const ms = performance.now() - began;
  latencies.sort();
  return { ms, latencies, stored, other };
}

/** The warm-up batches' answers together, and the daemons' CPU per item in each window (us). */
export interface WarmUp {
  stored: number;
  other: Map<string, number>;
  windows: number[];
}

/**
 * Posts `windows` batches of the callbacks `make(i)` gives (window i), each followed by `settle(i)`, recording the
 * daemons' CPU per item in each.
 */
export async function warmUp(
  poster: Poster,
  daemons: DaemonProcess[],
  windows: number,
  make: (window: number) => Post[],
  settle: (window: number, sofar: WarmUp) => Promise<void> = async () => undefined,
): Promise<WarmUp> {
  const cpu = () => daemons.reduce((a, d) => a + cpuMs(d.proc.pid), 0);
  const out: WarmUp = { stored: 0, other: new Map(), windows: [] };
  for (let w = 0; w < windows; w++) {
    const posts = make(w);
    const cpu0 = cpu();
    const b = await post(poster, posts);
    out.stored += b.stored.size;
    for (const [k, n] of b.other) out.other.set(k, (out.other.get(k) ?? 0) + n);
    await settle(w, out);
    out.windows.push(((cpu() - cpu0) / posts.length) * 1000);
  }
  return out;
}

export const windowsText = (w: WarmUp, size: number) =>
  `daemon CPU us per item in the warm-up's windows of ${size}: ${w.windows.map((x) => x.toFixed(0)).join(', ')}`;

export const pct = (sorted: Float64Array, p: number) =>
  sorted.length
    ? (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number)
    : NaN;

export const others = (m: Map<string, number>) =>
  [...m].map(([k, n]) => `${n} x ${k.slice(0, 80)}`).join('; ');

/**
 * Every series of the daemons' /metrics (`name{labels}` → value), summed over the daemons. Read from memory:
 * unlike /status, it asks the store nothing, so that polling it does not load what is measured.
 */
export async function metrics(daemons: DaemonProcess[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const d of daemons) {
    const text = await (await request(`${d.url}/metrics`)).body.text();
    for (const line of text.split('\n')) {
      if (!line || line.startsWith('#')) continue;
      const i = line.lastIndexOf(' ');
      const key = line.slice(0, i);
      out.set(key, (out.get(key) ?? 0) + Number(line.slice(i + 1)));
    }
  }
  return out;
}

/** The sum of the series of the metric `name` whose labels hold `label` (e.g. `action="devices.suspend"`). */
export const total = (m: Map<string, number>, name: string, label = '') =>
  [...m]
    .filter(([k]) => (k === name || k.startsWith(`${name}{`)) && k.includes(label))
    .reduce((a, [, n]) => a + n, 0);

/**
 * Waits until the daemons have ended `runs` runs in all, and have no callback left to process and no run going,
 * reading their /metrics every `pollMs` (each read costs a daemon about 1.5 ms of CPU, taken from its runs).
 */
export async function drained(
  daemons: DaemonProcess[],
  runs: number,
  timeoutMs: number,
  pollMs = 250,
): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const m = await metrics(daemons);
    if (
      total(m, 'fleetbook_runs_total') >= runs &&
      total(m, 'fleetbook_inbox_backlog') === 0 &&
      total(m, 'fleetbook_runs_running') === 0
    )
      return true;
    await new Promise((r) => setTimeout(r, pollMs));
  }
  return false;
}

/** The IMEIs of the active devices of `account`, in the emulator's order. */
export async function activeImeis(emu: EmulatorProcess, account: string): Promise<string[]> {
  const client = createClient({
    baseUrl: emu.baseUrl,
    clientId: emu.defaults.clientId,
    clientSecret: emu.defaults.clientSecret,
    username: emu.defaults.username,
    password: emu.defaults.password,
    rates: { m2m: { requestsPerSecond: 100_000, concurrency: 8 } },
  });
  const imeis: string[] = [];
  try {
    for await (const page of client.pages('devices.list', { accountName: account, currentState: 'active' }))
      for (const d of (page as { devices?: { deviceIds: { id: string; kind: string }[] }[] }).devices ?? []) {
        const imei = d.deviceIds.find((x) => x.kind.toLowerCase() === 'imei');
        if (imei) imeis.push(imei.id);
      }
  } finally {
    await client.close();
  }
  return imeis;
}

/** The rows `sql` selects from the store the daemons left (a SQLite file read-only, or a PostgreSQL database). */
export async function storeRows<T>(state: string, sql: string): Promise<T[]> {
  if (!isPostgresUrl(state)) {
    const db = new Database(state, { readonly: true });
    try {
      return db.prepare(sql).all() as T[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client(state);
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}
