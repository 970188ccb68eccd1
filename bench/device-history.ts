/**
 * D1: the console's device page (Store.deviceHistory: a device's result in every run that touched it) on a store
 * of ten runs of 1,000,000 devices each, shaped as fleetbook writes them: five suspends (500 devices a request,
 * each accepted, then confirmed) and five location reports (10,000 a report with each device's location, 5 %
 * missed, then retried together at cacheMode 1). Three devices are looked up, 20 times each: one every run
 * touched, one only the oldest run touched (its entries in the other runs bracket it), and one no run touched.
 * The store is read in this process, as the daemon's console reads it, and the event loop's longest stall over
 * the lookups is measured with them: on SQLite the read used to run on the event loop, where the daemon
 * acknowledges callbacks. D1-PG, the same on PostgreSQL.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openStore } from '../src/store/open.js';
import type { DeviceGroup, Store } from '../src/store/store.js';
import { postgresUrl, stopPostgres } from '../test/helpers/postgres.js';
import { median } from './stats.js';
import type { BenchRow } from './types.js';

const RUNS = 10;
const DEVICES = 1_000_000;
const LOOKUPS = 20;
const TARGET_MS = 200;
const STALL_MS = 50;
/** Device n's IMEI: every seventh number, so that the numbers between are devices no run touched. */
const imei = (n: number) => String(350000000000000 + n * 7);
const EVERY = imei(123_457);
const OLDEST = imei(777_777);
const NONE = String(350000000000000 + 123_457 * 7 + 3);

export async function benchDeviceHistory(only: string[]): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'fleetbook-bench-history-'));
  try {
    if (!only.length || only.includes('D1')) rows.push(await lookups('D1', join(dir, 'state.db')));
    if (!only.length || only.includes('D1-PG')) rows.push(await lookups('D1-PG', await postgresUrl()));
  } finally {
    await stopPostgres();
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}

/** Run `r`'s devices in order, without OLDEST but in the first run. */
function devicesOf(r: number, from: number, to: number): string[] {
  const ids: string[] = [];
  for (let n = from; n < to; n++) if (r === 0 || n !== 777_777) ids.push(imei(n));
  return ids;
}

async function write(store: Store): Promise<void> {
  const at = new Date().toISOString();
  for (let r = 0; r < RUNS; r++) {
    const run = `bench-history-${r}`;
    const report = r % 2 === 1;
    store.createRun({
      id: run,
      playbook: report ? 'nightly-location-report' : 'suspend-fleet',
      status: 'succeeded',
      trigger: { manual: true },
      inputs: {},
      startedAt: at,
    });
    const missed: string[] = [];
    const batch = report ? 10_000 : 500;
    for (let b = 0; b < DEVICES / batch; b++) {
      const ids = devicesOf(r, b * batch, (b + 1) * batch);
      const group = (o: Partial<DeviceGroup> & { ids: string[] }): DeviceGroup => ({
        kind: 'imei',
        outcome: 'succeeded',
        attempts: 1,
        requestId: `${run}-${b}`,
        ...o,
      });
      if (report) {
        const located = ids.filter((_, i) => i % 20);
        missed.push(...ids.filter((_, i) => i % 20 === 0));
        store.recordDevices(
          run,
          'report',
          [
            group({ ids: located, data: located.map((id) => location(id)) }),
            group({
              ids: ids.filter((_, i) => i % 20 === 0),
              outcome: 'failed',
              errorType: 'SVC CACHE UNAVAILABLE',
              errorClass: 'retryable',
            }),
          ],
          at,
        );
      } else {
        store.recordDevices(run, 'suspend', [group({ ids, outcome: 'accepted' })], at);
        store.recordDevices(run, 'suspend', [group({ ids })], at);
      }
      if (b % 100 === 99) await store.durable();
    }
    for (let i = 0; i < missed.length; i += 10_000) {
      const ids = missed.slice(i, i + 10_000);
      store.recordDevices(
        run,
        'report',
        [
          {
            kind: 'imei',
            outcome: 'succeeded',
            attempts: 2,
            requestId: `${run}-retry-${i}`,
            ids,
            data: ids.map(location),
          },
        ],
        at,
      );
    }
    await store.durable();
  }
}

const location = (id: string) => ({
  latitude: 48 + (Number(id.slice(-4)) % 1000) / 1000,
  longitude: 2 + (Number(id.slice(-7, -4)) % 1000) / 1000,
  accuracy: 120,
  locatedAt: '2026-11-29T02:00:00.000Z',
});

/** The row `id`, of the store at `state`: a SQLite file or a PostgreSQL URL. */
async function lookups(id: string, state: string): Promise<BenchRow> {
  const store = await openStore(state);
  try {
    const w0 = performance.now();
    await write(store);
    const writeS = (performance.now() - w0) / 1000;
    const found: Record<string, number> = {};
    const ms: Record<string, number[]> = {};
    const stall = monitorEventLoopDelay({ resolution: 1 });
    // The first lookup starts what reads (the worker, a connection): timed apart.
    const f0 = performance.now();
    await store.deviceHistory(NONE, 500);
    const firstMs = performance.now() - f0;
    stall.enable();
    for (let i = 0; i < LOOKUPS; i++) {
      for (const [name, device] of [
        ['every run', EVERY],
        ['the oldest run', OLDEST],
        ['no run', NONE],
      ] as const) {
        const t0 = performance.now();
        found[name] = (await store.deviceHistory(device, 500)).length;
        (ms[name] ??= []).push(performance.now() - t0);
        // The loop turns between two pages, as a daemon's does: the stall of a lookup shows at the next turn.
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
    stall.disable();
    const stallMs = stall.max / 1e6;
    const max = Math.max(...Object.values(ms).flat());
    const fig = (name: string) =>
      `${name} (${found[name]} results) ${median(ms[name] ?? []).toFixed(1)}/${Math.max(...(ms[name] ?? [])).toFixed(1)}`;
    const right = found['every run'] === 15 && found['the oldest run'] === 2 && found['no run'] === 0;
    return {
      id,
      measure: `a device's history (the console's device page) in a store of ${RUNS} runs of ${DEVICES.toLocaleString('en')} devices (5 suspends, 5 location reports with 5 % retried; written in ${writeS.toFixed(0)} s), ${LOOKUPS} lookups each, ms median/max: a device ${fig('every run')}; ${fig('the oldest run')}; ${fig('no run')}; the first lookup ${firstMs.toFixed(0)}; the event loop's longest stall over the lookups ${stallMs.toFixed(1)} ms`,
      value: `max ${max.toFixed(1)} ms; stall ${stallMs.toFixed(1)} ms`,
      target: `< ${TARGET_MS} ms each; stall <= ${STALL_MS} ms; results right`,
      pass: right && max < TARGET_MS && stallMs <= STALL_MS,
    };
  } finally {
    await store.close();
  }
}
