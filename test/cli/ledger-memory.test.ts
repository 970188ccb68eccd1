/**
 * A device-state run's ledger read in bounded memory, by `fleetbook runs show ID --devices` and by a playbook's
 * `ledger.query`: each device of such a run has two entries in its step (accepted, then its outcome), and the
 * latest counts. Before, the store held every device with several entries in a map to pick the latest (at a
 * million devices, 1 GB of resident set), and `ledger.query` every device's row of the steps it read.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import type { DeviceGroup } from '../../src/store/store.js';
import { BIN, stateFile } from '../helpers/cli.js';
import { imei, run } from '../store/fixtures.js';

const DEVICES = 200_000;
const BATCH = 500;
const AT = '2026-11-23T10:00:30.000Z';
/** The old space (MB) of `runs show`: the map of 200,000 devices alone took more. */
const HEAP_MB = 24;
/**
 * The old space (MB) of `fleetbook run`, whose modules, schemas and playbook take some 30 (more under the tests'
 * coverage): a query of this run read every device's row of the step, 90 MB.
 */
const RUN_HEAP_MB = 56;
/** What `heapUsed` may show over the old space's cap: the young generation, which the cap does not bound. */
const YOUNG_MB = 6;

describe('cli: a device-state run of 200,000 devices read in bounded memory', function () {
  this.timeout(120_000);
  const state = stateFile((store) => {
    store.createRun(
      run('big', { playbook: 'big-suspend', status: 'succeeded', endedAt: '2026-11-23T10:05:00.000Z' }),
    );
    // As a suspend writes it: each batch accepted, then confirmed; one device in ten of a batch failed.
    for (let b = 0; b < DEVICES / BATCH; b++) {
      const ids = Array.from({ length: BATCH }, (_, i) => imei(b * BATCH + i));
      const g = (outcome: DeviceGroup['outcome'], part: string[]): DeviceGroup => ({
        kind: 'imei',
        outcome,
        attempts: 1,
        requestId: `request-${b}`,
        ids: part,
        ...(outcome === 'failed' ? { errorType: 'SERVICE_NOT_ALLOWED', errorClass: 'permanent' } : {}),
      });
      store.recordDevices('big', 'suspend', [g('accepted', ids)], AT);
      store.recordDevices(
        'big',
        'suspend',
        [
          g(
            'succeeded',
            ids.filter((_, i) => i % 10),
          ),
          g(
            'failed',
            ids.filter((_, i) => !(i % 10)),
          ),
        ],
        AT,
      );
    }
  });

  /** `fleetbook ...args` in an old space of `heapMb`; its stdout a line at a time, its exit code and peak heap. */
  async function capped(heapMb: number, args: string[], onLine: (line: string) => void) {
    const peakFile = join(state.dir, 'peak.json');
    const child = spawn(
      process.execPath,
      [
        `--max-old-space-size=${heapMb}`,
        '--import',
        join(import.meta.dirname, '..', 'helpers', 'memory-peak.mjs'),
        BIN,
        ...args,
      ],
      {
        env: { PATH: process.env.PATH ?? '', FLEETBOOK_STATE: state.file, MEMORY_PEAK_FILE: peakFile },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    for await (const line of createInterface({ input: child.stdout })) onLine(line);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const peak = JSON.parse(readFileSync(peakFile, 'utf8')) as { heapUsed: number };
    return { code, stderr, heapMb: peak.heapUsed / 2 ** 20 };
  }

  it('runs show --devices: every device once, with its latest outcome', async () => {
    const outcomes = new Map<string, string>();
    let lines = 0;
    const res = await capped(HEAP_MB, ['runs', 'show', 'big', '--devices'], (line) => {
      const m = /^ {2}suspend\s+(\d+)\s+(\w+)/.exec(line);
      if (!m) return;
      lines++;
      outcomes.set(m[1] as string, m[2] as string);
    });
    expect(res.code, res.stderr.slice(-2000)).to.equal(0);
    expect(lines).to.equal(DEVICES);
    expect(outcomes.size).to.equal(DEVICES);
    const count = (o: string) => [...outcomes.values()].filter((v) => v === o).length;
    expect([count('succeeded'), count('failed'), count('accepted')]).to.deep.equal([
      DEVICES * 0.9,
      DEVICES * 0.1,
      0,
    ]);
    expect(outcomes.get(imei(0))).to.equal('failed');
    expect(outcomes.get(imei(1))).to.equal('succeeded');
    expect(res.heapMb, 'peak heap (MB)').to.be.below(HEAP_MB + YOUNG_MB);
  });

  it('ledger.query: the devices that failed, and only them', async () => {
    const file = join(state.dir, 'requery.yaml');
    writeFileSync(
      file,
      `version: 1
name: requery
on: { manual: true }
steps:
  - id: failed
    uses: ledger.query
    with: { playbook: big-suspend, step: suspend, outcome: failed }
  - id: say
    uses: log
    with:
      message: "failed \${{ steps.failed.output.count }}, first \${{ steps.failed.output.devices[0].id }}"
`,
    );
    const res = await capped(RUN_HEAP_MB, ['run', file], () => undefined);
    expect(res.code, res.stderr.slice(-2000)).to.equal(0);
    expect(res.stderr).to.include(`failed ${DEVICES * 0.1}, first ${imei(0)}`);
    expect(res.heapMb, 'peak heap (MB)').to.be.below(RUN_HEAP_MB + YOUNG_MB);
  });
});
