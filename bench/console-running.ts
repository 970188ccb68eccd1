/**
 * C2: the console's device table of a run that goes on, 1,000,000 devices. A store holds one running run shaped
 * as a suspend writes it: 2,000 requests of 500 devices, each accepted, then confirmed. Its pages are read in
 * this process as the console reads them (devicePage): the first page, then pages by cursor; then the run writes
 * 100 more requests, and the first page again takes them in. Which devices of a page have several results is
 * read from the entries whose range of ids holds them (store/id-range.ts), on SQLite (C2, in the grouping
 * worker) and PostgreSQL (C2-PG). It used to take a pass over the run: on SQLite to index it at the first page
 * (1.1-1.4 s), on PostgreSQL at each lookup (0.4-1.7 s a page).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devicePage, latestOf, type DeviceCursor } from '../src/store/device-table.js';
import { openStore } from '../src/store/open.js';
import { emptyCounts, type DeviceGroup, type Store } from '../src/store/store.js';
import { postgresUrl, stopPostgres } from '../test/helpers/postgres.js';
import { median } from './stats.js';
import type { BenchRow } from './types.js';

const RUN = 'bench-console-running';
const REQUESTS = 2_000;
const BATCH = 500;
const TARGET_MS = 200;
const imei = (n: number) => String(350000000000000 + n);

/** Request `r` of the suspend: its devices accepted, then confirmed. */
function suspend(store: Store, r: number, at: string): void {
  const ids = Array.from({ length: BATCH }, (_, i) => imei(r * BATCH + i));
  const group = (outcome: DeviceGroup['outcome']): DeviceGroup[] => [
    { kind: 'imei', outcome, attempts: 1, requestId: `request-${r}`, ids },
  ];
  store.recordDevices(RUN, 'suspend', group('accepted'), at);
  store.recordDevices(RUN, 'suspend', group('succeeded'), at);
}

export async function benchConsoleRunning(only: string[]): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'fleetbook-bench-running-'));
  try {
    if (!only.length || only.includes('C2')) rows.push(await pages('C2', join(dir, 'state.db')));
    if (!only.length || only.includes('C2-PG')) rows.push(await pages('C2-PG', await postgresUrl()));
  } finally {
    await stopPostgres();
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}

/** The row `id`, of the store at `state`: a SQLite file or a PostgreSQL URL. */
async function pages(id: string, state: string): Promise<BenchRow> {
  const store = await openStore(state);
  const sqlite = id === 'C2';
  try {
    const at = new Date().toISOString();
    store.createRun({
      id: RUN,
      playbook: 'suspend-fleet',
      status: 'running',
      trigger: { manual: true },
      inputs: {},
      startedAt: at,
      summary: {
        runId: RUN,
        playbook: 'suspend-fleet',
        status: 'running',
        startedAt: at,
        steps: [],
        devices: { ...emptyCounts(), total: REQUESTS * BATCH },
      },
    });
    for (let r = 0; r < REQUESTS; r++) {
      suspend(store, r, at);
      if (r % 100 === 99) await store.durable();
    }
    await store.durable();
    const latest = latestOf(store, RUN, false);
    /** One page of 50 rows from `after`: its time in ms, its rows and its cursor. */
    const page = async (after?: DeviceCursor) => {
      const t0 = performance.now();
      const p = await devicePage(store, RUN, latest, {}, after, 50);
      return { ms: performance.now() - t0, ...p };
    };
    const first = await page();
    const pages: number[] = [];
    let rows = first.rows.length;
    let next = first.next;
    // 40 pages, or as many as a minute gives (a pass over the run each is far slower).
    const until = performance.now() + 60_000;
    for (let i = 0; i < 40 && next && performance.now() < until; i++) {
      const p = await page(next);
      pages.push(p.ms);
      rows += p.rows.length;
      next = p.next;
    }
    // The run goes on: 100 more requests, then the first page again, which takes them in.
    for (let r = REQUESTS; r < REQUESTS + 100; r++) suspend(store, r, at);
    await store.durable();
    const after = await page();
    const worst = Math.max(...pages, after.ms);
    const confirmed = [...first.rows, ...after.rows].every((r) => r.outcome === 'succeeded');
    return {
      id,
      measure:
        `console device table of a running suspend of 1,000,000 devices (2,000 requests of 500, each accepted then confirmed), pages of 50 rows, ms: ` +
        `first page ${first.ms.toFixed(1)}${sqlite ? ' (starts the grouping worker, here from the TypeScript sources)' : ''}; ${pages.length} pages by cursor median ${median(pages).toFixed(1)}, max ${Math.max(...pages).toFixed(1)} (${rows} rows); ` +
        `after 100 more requests, the first page again ${after.ms.toFixed(1)}`,
      value: `pages after the first: max ${worst.toFixed(1)} ms`,
      target: `< ${TARGET_MS} ms each; the first (information)`,
      pass: confirmed && rows === 50 * (pages.length + 1) && worst < TARGET_MS,
    };
  } finally {
    await store.close();
  }
}
