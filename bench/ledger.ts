/**
 * L1: `fleetbook runs show ID --devices --json` of a run of 1,000,000 devices, in its own process: the time, the
 * CLI's peak RSS, and that every device is in the output. The store is written first, through the store's API,
 * as a suspend in batches of 500 writes it: each batch accepted, then each device's outcome (5 % of each batch
 * failed with one error type). Every device has two entries, and the latest counts.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { groupResults } from '../src/runner/devices.js';
import { SqliteStore } from '../src/store/sqlite.js';
import type { DeviceResult } from '../src/store/store.js';
import type { BenchRow } from './types.js';

const ROOT = join(import.meta.dirname, '..');
const DEVICES = 1_000_000;
const BATCH = 500;

async function writeRun(file: string): Promise<void> {
  const store = new SqliteStore(file);
  try {
    store.createRun({
      id: 'bench-run',
      playbook: 'bench-ledger',
      status: 'succeeded',
      trigger: { type: 'manual' },
      inputs: {},
      startedAt: new Date().toISOString(),
    });
    for (let b = 0; b < DEVICES / BATCH; b++) {
      const accepted: DeviceResult[] = [];
      const results: DeviceResult[] = [];
      const requestId = `request-${b}`;
      for (let i = 0; i < BATCH; i++) {
        const deviceId = String(356758880000000 + (b * BATCH + i) * 7);
        accepted.push({ deviceId, kind: 'imei', outcome: 'accepted', attempts: 1, requestId });
        results.push(
          i % 20
            ? { deviceId, kind: 'imei', outcome: 'succeeded', attempts: 1, requestId }
            : {
                deviceId,
                kind: 'imei',
                outcome: 'failed',
                errorType: 'SERVICE_NOT_ALLOWED',
                errorClass: 'permanent',
                attempts: 1,
                requestId,
              },
        );
      }
      store.recordDevices('bench-run', 'suspend', groupResults(accepted), new Date().toISOString());
      store.recordDevices('bench-run', 'suspend', groupResults(results), new Date().toISOString());
    }
  } finally {
    await store.close();
  }
}

/** Runs the built CLI; counts the device rows of its output as it streams, and reads its peak RSS at exit. */
async function show(file: string): Promise<{ ms: number; rows: number; bytes: number; maxRssMb: number }> {
  // The child reports its own peak RSS on stderr as it exits.
  const report = join(ROOT, 'bench', 'children', 'exit-peak-rss.mjs');
  const began = performance.now();
  const child = spawn(
    process.execPath,
    [
      '--import',
      report,
      join(ROOT, 'bin', 'fleetbook.js'),
      'runs',
      'show',
      'bench-run',
      '--devices',
      '--json',
    ],
    { env: { ...process.env, FLEETBOOK_STATE: file }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let rows = 0;
  let bytes = 0;
  let tail = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    bytes += chunk.length;
    const lines = (tail + chunk).split('\n');
    tail = lines.pop() ?? '';
    for (const l of lines) if (l.startsWith('      "deviceId": ')) rows++;
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`runs show exited ${code}: ${err}`);
  const rss = /peakRssMb=([\d.]+)/.exec(err);
  return { ms: performance.now() - began, rows, bytes, maxRssMb: Number(rss?.[1] ?? NaN) };
}

export async function benchLedger(): Promise<BenchRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'fleetbook-bench-ledger-'));
  try {
    const file = join(dir, 'state.db');
    await writeRun(file);
    const r = await show(file);
    return [
      {
        id: 'L1',
        measure: `fleetbook runs show --devices --json, a suspend of ${DEVICES.toLocaleString('en-US')} devices, each accepted then confirmed (start-up included): ${(r.bytes / 1e6).toFixed(0)} MB of JSON, ${r.rows.toLocaleString('en-US')} device rows`,
        value: `${(r.ms / 1000).toFixed(1)} s; peak RSS ${r.maxRssMb.toFixed(0)} MB`,
        target: '(information)',
        pass: r.rows === DEVICES,
      },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
