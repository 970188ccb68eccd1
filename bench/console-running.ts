/**
 * C2: the console's device table of a run that goes on, 1,000,000 devices. A SQLite state file holds one running
 * run shaped as a suspend writes it: 2,000 requests of 500 devices, each accepted, then confirmed. Its pages are
 * read in this process as the console reads them (devicePage, with the store's grouping worker): the first
 * page, which indexes the run (store/sqlite-live.ts), then pages by cursor; then the run writes 100 more
 * requests, and the next page takes them in. A page of a running run looks up its devices in that index, brought
 * up to date from the entries written since the last page, where it used to pass over every entry of the run.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devicePage, latestOf, type DeviceCursor } from '../src/console/device-table.js';
import { SqliteStore } from '../src/store/sqlite.js';
import { emptyCounts, type DeviceGroup } from '../src/store/store.js';
import { median } from './stats.js';
import type { BenchRow } from './types.js';

const RUN = 'bench-console-running';
const REQUESTS = 2_000;
const BATCH = 500;
const TARGET_MS = 200;
const imei = (n: number) => String(350000000000000 + n);

/** Request `r` of the suspend: its devices accepted, then confirmed. */
function suspend(store: SqliteStore, r: number, at: string): void {
  const ids = Array.from({ length: BATCH }, (_, i) => imei(r * BATCH + i));
  const group = (outcome: DeviceGroup['outcome']): DeviceGroup[] => [
    { kind: 'imei', outcome, attempts: 1, requestId: `request-${r}`, ids },
  ];
  store.recordDevices(RUN, 'suspend', group('accepted'), at);
  store.recordDevices(RUN, 'suspend', group('succeeded'), at);
}

export async function benchConsoleRunning(): Promise<BenchRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'fleetbook-bench-running-'));
  const store = new SqliteStore(join(dir, 'state.db'));
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
    for (let i = 0; i < 40 && next; i++) {
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
    return [
      {
        id: 'C2',
        measure:
          `console device table of a running suspend of 1,000,000 devices (2,000 requests of 500, each accepted then confirmed), pages of 50 rows, ms: ` +
          `first page ${first.ms.toFixed(0)} (indexes the run, in the grouping worker); ${pages.length} pages by cursor median ${median(pages).toFixed(1)}, max ${Math.max(...pages).toFixed(1)} (${rows} rows); ` +
          `after 100 more requests, the first page again ${after.ms.toFixed(1)}`,
        value: `pages after the first: max ${worst.toFixed(1)} ms`,
        target: `< ${TARGET_MS} ms each; the first (information)`,
        pass: confirmed && rows === 50 * (pages.length + 1) && worst < TARGET_MS,
      },
    ];
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}
