/**
 * `npm run bench`: every performance figure of product.md section 9 that exists so far, each measured side by
 * side in one run, printed as one table and written to bench/RESULTS.md (a run of every row only: a partial run
 * would leave the file with some rows of another day). `npm run bench -- P6` runs only the rows whose id is given
 * (`P3-PG` also runs P3, the SQLite figure it is judged against).
 */
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { benchConsole } from './console.js';
import { benchConsoleRunning } from './console-running.js';
import { benchDaemon } from './daemon.js';
import { benchDeviceHistory } from './device-history.js';
import { benchEmulator } from './emulator.js';
import { benchEngine, benchFleet } from './engine.js';
import { benchLedger } from './ledger.js';
import { benchMocked } from './mocked.js';
import { benchRate } from './rate.js';
import { benchResume } from './resume.js';
import { benchSharedRate } from './shared-rate.js';
import { benchValidate } from './validate.js';
import type { BenchRow } from './types.js';

/** Each suite runs the rows of `ids` asked for (all when none is named); `only` lists the ids asked for. */
const suites: { ids: string[]; run: (only: string[]) => Promise<BenchRow[]> }[] = [
  { ids: ['P1', 'P2'], run: benchEngine },
  { ids: ['P1M'], run: benchMocked },
  { ids: ['P7'], run: benchFleet },
  { ids: ['P7R'], run: benchResume },
  { ids: ['E1'], run: benchEmulator },
  { ids: ['P3', 'P4', 'P3-PG', 'P4-PG', 'P3-PG3', 'P4-PG3'], run: benchDaemon },
  { ids: ['P5'], run: benchValidate },
  { ids: ['P6'], run: benchRate },
  { ids: ['P6-PG3'], run: benchSharedRate },
  { ids: ['L1'], run: benchLedger },
  { ids: ['C1'], run: benchConsole },
  { ids: ['C2', 'C2-PG'], run: benchConsoleRunning },
  { ids: ['D1', 'D1-PG'], run: benchDeviceHistory },
];

const only = process.argv.slice(2).map((s) => s.toUpperCase());
const rows: BenchRow[] = [];
for (const s of suites) {
  if (only.length && !s.ids.some((id) => only.includes(id))) continue;
  rows.push(...(await s.run(only)));
}

const cols = ['id', 'measure', 'value', 'target', 'pass'] as const;
const cell = (r: BenchRow, c: (typeof cols)[number]) => (c === 'pass' ? (r.pass ? 'yes' : 'NO') : r[c]);
const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r, c).length)));
const line = (vals: string[]) => vals.map((v, i) => v.padEnd(width[i] as number)).join(' | ');
const table = [
  line([...cols]),
  width.map((w) => '-'.repeat(w)).join('-|-'),
  ...rows.map((r) => line(cols.map((c) => cell(r, c)))),
];
for (const l of table) console.log(l);
process.exitCode = rows.every((r) => r.pass) ? 0 : 1;

if (!only.length) {
  const md = (vals: string[]) => `| ${vals.map((v) => v.replace(/\|/g, '\\|')).join(' | ')} |`;
  writeFileSync(
    join(import.meta.dirname, 'RESULTS.md'),
    [
      '# Benchmark results',
      '',
      `The latest \`npm run bench\` of every row, written by the bench itself: ${new Date().toISOString()}, Node ${process.version}, ${cpus().length} cores. Figures from shared machines vary from run to run; the commit that changed a figure gives its spread over several runs.`,
      '',
      md([...cols]),
      md(cols.map(() => '---')),
      ...rows.map((r) => md(cols.map((c) => cell(r, c)))),
      '',
    ].join('\n'),
  );
}
