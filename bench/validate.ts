/**
 * P5: `fleetbook validate` on 1,000 varied playbooks, ≥ 1,000 playbooks/s: the real CLI process over a
 * directory, start-up included (what CI users run), as bin/fleetbook.js runs it from dist/. The machine is
 * noisy, so the CLI runs RUNS times and the row gives the median (and the range).
 *
 * A second row, for information, is the steady rate of the loader in-process (`loadPlaybookFile`, what
 * `fleetbook run` and the daemon use), after a warm-up.
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
const RUNS = 3;

/** One step of a varied kind and YAML style, seeded by the playbook `i` and the step `s`. */
function step(i: number, s: number): string {
  switch ((i + s) % 9) {
    case 0:
      return `  - id: dl${s}
    uses: devices.list
    with: { accountName: \${{ inputs.account }} }`;
    case 1:
      return `  - id: report${s}
    name: Locate the devices of list0
    uses: location.createReport
    if: \${{ size(steps.list0.items) > ${s} }}
    with: { accountName: "0000123456-0000${i % 10}", deviceList: \${{ steps.list0.items }}, cacheMode: "0" }
    retry: { on: [http.5xx, http.429], maxAttempts: 4, delay: 2s, maxDelay: 1m }
    devices:
      retry:
        - on: [SVC CACHE UNAVAILABLE]
          with: { cacheMode: "1" }
      ignore: [SVC CONSENT CHECK FAILED]
    wait: { for: completion, timeout: 2h }`;
    case 2:
      return `  - id: each${s}
    forEach:
      items: \${{ steps.list0.items }}
      batchSize: ${100 * (1 + (i % 5))}
      concurrency: 4
      steps:
        - id: suspend${s}
          uses: devices.suspend
          with: { accountName: \${{ inputs.account }}, devices: \${{ item }} }
          onError:
            - id: not_suspended${s}
              uses: log
              with: { message: "could not suspend batch \${{ index }}", level: warn }`;
    case 3:
      return `  - id: note${s}
    uses: log
    with:
      message: |
        run \${{ run.id }} step ${s} of playbook ${i}
        account \${{ inputs.account }}
      level: info
      fields:
        playbook: bench-${i}
        step: ${s}`;
    case 4:
      return `  - id: set${s}
    set: { count: \${{ ${s} + 1 }}, label: 'batch-${i}', ratio: ${s}.5, enabled: true }`;
    case 5:
      return `  - id: both${s}
    parallel:
      - id: left${s}
        wait: ${1 + (i % 30)}s
      - id: right${s}
        uses: log
        with: { message: "right branch of ${s}" }`;
    case 6:
      return `  # Tell the on-call channel; a failed page does not fail the run.
  - id: page${s}
    uses: notify.webhook
    if: \${{ "WEBHOOK" in secrets }}
    with:
      url: \${{ secrets.WEBHOOK }}
      body: { text: "playbook ${i}: \${{ size(steps.list0.items) }} devices" }
    retry: { on: [http.5xx, network], maxAttempts: 3 }
    onError: continue`;
    case 7:
      return `  - id: write${s}
    uses: report.write
    with: { path: "\${{ run.date }}-${i}-${s}.csv", format: csv, step: list0 }`;
    default:
      return `  - id: stop${s}
    if: \${{ inputs.limit < 0 }}
    fail:
      message: >-
        limit \${{ inputs.limit }} is negative
        (step ${s})`;
  }
}

/** The trigger of playbook `i`: a schedule, a callback, several schedules, or manual only. */
function trigger(i: number): string {
  switch (i % 4) {
    case 0:
      return `on:\n  schedule: { cron: "${i % 60} ${i % 24} * * *", timezone: America/New_York }`;
    case 1:
      return `on:\n  callback:\n    service: DeviceUsage\n    if: \${{ event.deviceResponse.alertServiceResponse.accountName != "" }}\n  manual: true`;
    case 2:
      return `on:\n  schedule:\n    - cron: '0 ${i % 24} * * 1-5'\n      timezone: Europe/Paris\n      missed: latest\n    - cron: "30 ${(i + 12) % 24} * * 0"\n  manual: true`;
    default:
      return 'on: { manual: true }';
  }
}

/** A playbook of a varied shape, size and style, seeded by `i`; each is valid. */
export function playbook(i: number): string {
  const steps: string[] = [];
  const n = 2 + (i % 9);
  for (let s = 0; s < n; s++) steps.push(step(i, s));
  const extras = [
    i % 3 === 0 ? 'concurrency: { key: "${{ inputs.account }}", limit: 1, onConflict: queue }' : '',
    i % 5 === 0 ? 'limits:\n  maxDevices: 500\n  maxPercentOfFleet: 5' : '',
    i % 7 === 0 ? `vars:\n  owner: team-${i % 4}\n  thresholds: [10, 20, 30]` : '',
  ].filter(Boolean);
  const final =
    i % 6 === 0
      ? `\nfinally:\n  - id: done\n    uses: log\n    with: { message: "done: \${{ run.id }}" }\n`
      : '';
  return `# Generated for the P5 benchmark (${i}).
version: 1
name: bench-${i}
description: Generated for the P5 benchmark.
${trigger(i)}
${extras.join('\n')}
inputs:
  account: { type: string, default: "0000123456-00001", description: The billing account. }
  limit:
    type: integer
    default: ${i}
steps:
  - id: list0
    uses: devices.list
    with:
      accountName: \${{ inputs.account }}
${steps.join('\n')}
${final}`;
}

/** One run of the CLI over `dir`: seconds, and the number of diagnostics it printed. */
async function cli(dir: string): Promise<{ seconds: number; diagnostics: number }> {
  const start = performance.now();
  const r = await run(
    process.execPath,
    [join(import.meta.dirname, '..', 'bin', 'fleetbook.js'), 'validate', dir, '--format', 'json'],
    { maxBuffer: 64 * 1024 * 1024 },
  ).catch((e: { stdout: string; code: number }) => e);
  const seconds = (performance.now() - start) / 1000;
  return { seconds, diagnostics: (JSON.parse(r.stdout) as unknown[]).length };
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
    const runs: { seconds: number; diagnostics: number }[] = [];
    for (let r = 0; r < RUNS; r++) runs.push(await cli(dir));
    const rates = runs.map((r) => N / r.seconds).sort((a, b) => a - b);
    const median = rates[Math.floor(rates.length / 2)] as number;
    const cliErrors = Math.max(...runs.map((r) => r.diagnostics));

    let errors = 0;
    for (const f of files.slice(0, 50)) errors += (await loadPlaybookFile(f)).diagnostics.length; // warm-up
    const start = performance.now();
    for (const f of files) errors += (await loadPlaybookFile(f)).diagnostics.length;
    const seconds = (performance.now() - start) / 1000;
    const range = `${Math.round(rates[0] as number)}-${Math.round(rates[rates.length - 1] as number)}`;
    return [
      {
        id: 'P5',
        measure: `fleetbook validate, ${N} playbooks, one CLI process (start-up included), median of ${RUNS} (${range}); diagnostics ${cliErrors}`,
        value: `${Math.round(median)} playbooks/s`,
        target: '>= 1,000 playbooks/s',
        pass: median >= 1000 && cliErrors === 0,
      },
      {
        id: 'P5',
        measure: `loader in-process (loadPlaybookFile, after warm-up), ${N} playbooks; diagnostics ${errors}`,
        value: `${Math.round(N / seconds)} playbooks/s`,
        target: '(information)',
        pass: errors === 0,
      },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
