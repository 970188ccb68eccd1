/**
 * One engine run for the P1, P2 and P7 benchmarks, in its own process so that its peak RSS is its own: loads the
 * playbook, runs it against the emulator with an on-disk store, and prints { ms, cpuMs, maxRssMb, summary }.
 *
 * Plain JavaScript on the built modules of dist/ (bench/main.ts builds first), run by plain node, as
 * `fleetbook run` is: under a TypeScript loader, every module loaded during the run (the request validators
 * are loaded on first use) would pass through the loader's hooks and cost several times as much.
 *
 *   engine.mjs PLAYBOOK BASE_URL CLIENT_ID SECRET USER PASSWORD ACCOUNT
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../../dist/api/client.js';
import { loadPlaybook } from '../../dist/playbook/load.js';
import { StoreDeviceLocks } from '../../dist/runner/locks.js';
import { runPlaybook } from '../../dist/runner/runner.js';
import { Lease } from '../../dist/store/lease.js';
import { SqliteStore } from '../../dist/store/sqlite.js';
import { peakRssMb } from './peak-rss.mjs';

const [file, baseUrl, clientId, clientSecret, username, password, account] = process.argv.slice(2);
const loaded = loadPlaybook(readFileSync(file, 'utf8'), file);
if (!loaded.playbook) throw new Error(JSON.stringify(loaded.diagnostics));
const local = { requestsPerSecond: 100_000, concurrency: 64 };
const client = createClient({
  baseUrl,
  clientId,
  clientSecret,
  username,
  password,
  rates: { m2m: local, loc: local, subsc: local, dm: local, oauth: local },
});
const dir = mkdtempSync(join(tmpdir(), 'fleetbook-bench-'));
// A report the playbook writes goes to the throwaway directory, removed with the store.
process.env.FLEETBOOK_REPORTS_DIR = join(dir, 'reports');
const store = new SqliteStore(join(dir, 'state.db'));
const start = performance.now();
const cpuStart = process.cpuUsage();
// As `fleetbook run`: a lease on the store, and per-device locks held in it.
const lease = new Lease({
  store,
  role: 'run',
  exclusive: false,
  leaseMs: 15_000,
  describe: 'the bench state file',
  onLost: (e) => {
    throw e;
  },
});
const summary = await runPlaybook(loaded.playbook, {
  client,
  store,
  owner: lease.id,
  locks: new StoreDeviceLocks(store, lease.id),
  pollIntervalMs: 50,
  inputs: { account },
});
const ms = performance.now() - start;
const cpu = process.cpuUsage(cpuStart);
const cpuMs = (cpu.user + cpu.system) / 1000;
await client.close();
await lease.release();
store.close();
console.error(dir);
process.stdout.write(JSON.stringify({ ms, cpuMs, maxRssMb: peakRssMb(), summary }));
