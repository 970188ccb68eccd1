/**
 * P5: `fleetbook validate` on 1,000 varied playbooks. Measured twice: the real CLI process over a directory
 * (start-up included, what CI users run), and the loader in-process (the steady rate).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadPlaybookFile } from '../src/playbook/load.js';
import type { BenchRow } from './types.js';

const run = promisify(execFile);
const N = 1_000;

/** A playbook of a varied shape and size: a few of the real step kinds, seeded by `i`. */
function playbook(i: number): string {
  const steps: string[] = [];
  const n = 2 + (i % 9);
  for (let s = 0; s < n; s++) {
    switch ((i + s) % 5) {
      case 0:
        steps.push(`  - id: dl${s}
    uses: devices.list
    with: { accountName: \${{ inputs.account }}, filter: { kind: imei } }`);
        break;
      case 1:
        steps.push(`  - id: report${s}
    uses: location.createReport
    if: \${{ size(steps.list0.items) > ${s} }}
    with: { accountName: "0000123456-0000${i % 10}", deviceList: \${{ steps.list0.items }}, cacheMode: "0" }
    retry: { on: [http.5xx, http.429], maxAttempts: 4, delay: 2s, maxDelay: 1m }
    devices:
      retry:
        - on: [SVC CACHE UNAVAILABLE]
          with: { cacheMode: "1" }
      ignore: [SVC CONSENT CHECK FAILED]
    wait: { for: completion, timeout: 2h }`);
        break;
      case 2:
        steps.push(`  - id: each${s}
    forEach:
      items: \${{ steps.list0.items }}
      batchSize: 500
      concurrency: 4
      steps:
        - id: suspend${s}
          uses: devices.suspend
          with: { accountName: \${{ inputs.account }}, devices: \${{ item }} }`);
        break;
      case 3:
        steps.push(`  - id: note${s}
    uses: log
    with: { message: "run \${{ run.id }} step ${s} of playbook ${i}" }`);
        break;
      default:
        steps.push(`  - id: set${s}
    set: { count: \${{ ${s} + 1 }}, label: "batch-${i}" }`);
    }
  }
  return `version: 1
name: bench-${i}
description: Generated for the P5 benchmark.
on:
  schedule: { cron: "${i % 60} ${i % 24} * * *", timezone: America/New_York }
inputs:
  account: { type: string, default: "0000123456-00001" }
steps:
  - id: list0
    uses: devices.list
    with: { accountName: \${{ inputs.account }} }
${steps.join('\n')}
`;
}

export async function benchValidate(): Promise<BenchRow[]> {
  const dir = await mkdtemp(join(tmpdir(), 'fleetbook-p5-'));
  const files: string[] = [];
  try {
    for (let i = 0; i < N; i++) {
      const f = join(dir, `pb-${String(i).padStart(4, '0')}.yaml`);
      await writeFile(f, playbook(i));
      files.push(f);
    }
    const cliStart = performance.now();
    const cli = await run(
      process.execPath,
      [join(import.meta.dirname, '..', 'bin', 'fleetbook.js'), 'validate', dir, '--format', 'json'],
      {
        maxBuffer: 64 * 1024 * 1024,
      },
    ).catch((e: { stdout: string; code: number }) => e);
    const cliSeconds = (performance.now() - cliStart) / 1000;
    const cliErrors = (JSON.parse(cli.stdout) as unknown[]).length;

    let errors = 0;
    for (const f of files.slice(0, 50)) errors += (await loadPlaybookFile(f)).diagnostics.length; // warm-up
    const start = performance.now();
    for (const f of files) errors += (await loadPlaybookFile(f)).diagnostics.length;
    const seconds = (performance.now() - start) / 1000;
    return [
      {
        id: 'P5',
        measure: `fleetbook validate, ${N} playbooks, one CLI process (start-up included); diagnostics ${cliErrors}`,
        value: `${Math.round(N / cliSeconds)} playbooks/s`,
        target: '>= 1,000 playbooks/s',
        pass: N / cliSeconds >= 1000 && cliErrors === 0,
      },
      {
        id: 'P5',
        measure: `loader in-process, ${N} playbooks; diagnostics ${errors}`,
        value: `${Math.round(N / seconds)} playbooks/s`,
        target: '>= 1,000 playbooks/s',
        pass: N / seconds >= 1000 && errors === 0,
      },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
