/**
 * P5: `fleetbook validate` on 1,000 playbooks, ≥ 1,000 playbooks/s: copies of the shipped playbooks/*.yaml (not
 * the playbook tests, *.test.yaml), taken in turn, each byte for byte (comments and all) but for its playbook
 * name, which gains the copy's number (two files of one name are a `duplicate-name` error, as in a real
 * directory), so that the row measures what users validate. The real CLI process over a directory, start-up included
 * (what CI users run), as bin/fleetbook.js runs it from dist/. The shipped playbooks are valid, so any
 * diagnostic, error or warning, fails the row. The machine is noisy: one command's time swings by a third from
 * one run to the next (0.61-0.99 s in five runs in a row), so the CLI runs RUNS times and the row gives the
 * median (and the range).
 *
 * A second row, for information, is the steady rate of the loader in-process (`loadPlaybookFile`, what
 * `fleetbook run` and the daemon use), after a warm-up.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadPlaybookFile } from '../src/playbook/load.js';
import type { BenchRow } from './types.js';

const run = promisify(execFile);
const N = 1_000;
const RUNS = 11;
const PLAYBOOKS = join(import.meta.dirname, '..', 'playbooks');

/** One run of the CLI over `dir`: seconds, and the number of diagnostics it printed (-1: it printed none). */
async function cli(dir: string): Promise<{ seconds: number; diagnostics: number }> {
  const start = performance.now();
  const r = await run(
    process.execPath,
    [join(import.meta.dirname, '..', 'bin', 'fleetbook.js'), 'validate', dir, '--format', 'json'],
    { maxBuffer: 64 * 1024 * 1024 },
  ).catch((e: { stdout: string }) => e);
  const seconds = (performance.now() - start) / 1000;
  let diagnostics = -1;
  try {
    diagnostics = (JSON.parse(r.stdout) as unknown[]).length;
  } catch {
    // No JSON: the command failed before it checked anything (a usage error, a crash).
  }
  return { seconds, diagnostics };
}

/** Writes N copies of the shipped playbooks into `dir`, cycling through them; returns the files written. */
async function copyShipped(dir: string): Promise<string[]> {
  const names = (await readdir(PLAYBOOKS))
    .filter((f) => f.endsWith('.yaml') && !f.endsWith('.test.yaml'))
    .sort();
  const sources = await Promise.all(names.map((f) => readFile(join(PLAYBOOKS, f), 'utf8')));
  const files: string[] = [];
  for (let i = 0; i < N; i++) {
    const n = String(i).padStart(4, '0');
    const f = join(dir, `${n}-${names[i % names.length] as string}`);
    await writeFile(f, (sources[i % sources.length] as string).replace(/^name: (.+)$/m, `name: $1-${n}`));
    files.push(f);
  }
  return files;
}

export async function benchValidate(): Promise<BenchRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'fleetbook-p5-'));
  try {
    const files = await copyShipped(dir);
    const runs: { seconds: number; diagnostics: number }[] = [];
    for (let r = 0; r < RUNS; r++) runs.push(await cli(dir));
    const rates = runs.map((r) => N / r.seconds).sort((a, b) => a - b);
    const median = rates[Math.floor(rates.length / 2)] as number;
    // The most any run reported; a run that printed nothing (-1) fails the row too.
    const diagnostics = runs.some((r) => r.diagnostics < 0)
      ? -1
      : Math.max(...runs.map((r) => r.diagnostics));

    let errors = 0;
    for (const f of files.slice(0, 50)) errors += (await loadPlaybookFile(f)).diagnostics.length; // warm-up
    const start = performance.now();
    for (const f of files) errors += (await loadPlaybookFile(f)).diagnostics.length;
    const seconds = (performance.now() - start) / 1000;
    const range = `${Math.round(rates[0] as number)}-${Math.round(rates[rates.length - 1] as number)}`;
    return [
      {
        id: 'P5',
        measure: `fleetbook validate, ${N} copies of the shipped playbooks, one CLI process (start-up included), median of ${RUNS} (${range}); diagnostics ${diagnostics < 0 ? 'none printed' : diagnostics}`,
        value: `${Math.round(median)} playbooks/s`,
        target: '>= 1,000 playbooks/s',
        pass: median >= 1000 && diagnostics === 0,
      },
      {
        id: 'P5',
        measure: `loader in-process (loadPlaybookFile, after warm-up), the same ${N} copies; diagnostics ${errors}`,
        value: `${Math.round(N / seconds)} playbooks/s`,
        target: '(information)',
        pass: errors === 0,
      },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
