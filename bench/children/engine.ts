/**
 * One engine run for the P1/P2 benchmarks, in its own process so that its peak RSS is its own: loads the
 * playbook, runs it against the emulator with an on-disk store, and prints { ms, maxRssMb, summary }.
 * It runs the built modules of dist/ (bench/main.ts builds first), as `fleetbook run` does.
 *
 *   engine.ts PLAYBOOK BASE_URL CLIENT_ID SECRET USER PASSWORD ACCOUNT
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as Client from '../../src/api/client.js';
import type * as Load from '../../src/playbook/load.js';
import type * as Runner from '../../src/runner/runner.js';
import type * as Sqlite from '../../src/store/sqlite.js';

const dist = <T>(path: string) => import(new URL(`../../dist/${path}`, import.meta.url).href) as Promise<T>;
const { createClient } = await dist<typeof Client>('api/client.js');
const { loadPlaybook } = await dist<typeof Load>('playbook/load.js');
const { runPlaybook } = await dist<typeof Runner>('runner/runner.js');
const { SqliteStore } = await dist<typeof Sqlite>('store/sqlite.js');

const [file, baseUrl, clientId, clientSecret, username, password, account] = process.argv.slice(
  2,
) as string[];
const loaded = loadPlaybook(readFileSync(file as string, 'utf8'), file);
if (!loaded.playbook) throw new Error(JSON.stringify(loaded.diagnostics));
const local = { requestsPerSecond: 100_000, concurrency: 64 };
const client = createClient({
  baseUrl: baseUrl as string,
  clientId,
  clientSecret,
  username,
  password,
  rates: { m2m: local, loc: local, subsc: local, dm: local, oauth: local },
});
const store = new SqliteStore(join(mkdtempSync(join(tmpdir(), 'fleetbook-bench-')), 'state.db'));
const start = performance.now();
const summary = await runPlaybook(loaded.playbook, {
  client,
  store,
  pollIntervalMs: 50,
  inputs: { account },
});
const ms = performance.now() - start;
await client.close();
store.close();
process.stdout.write(JSON.stringify({ ms, maxRssMb: process.resourceUsage().maxRSS / 1024, summary }));
