/**
 * report.write replaces a report whole or not at all (src/actions/reports.ts): the rows go to a temporary file
 * beside it, renamed over the report's name once written. A reader of the name sees the previous report until
 * then; a write that fails part-way leaves the previous report as it was, and no temporary file behind. The
 * temporary file a crashed writer left is removed by the next write of that name on the same machine.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { writeReport } from '../../src/actions/reports.js';

describe('report.write: a report replaced whole', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetbook-report-atomic-'));
    await writeFile(join(dir, 'nightly.csv'), 'deviceId,outcome\nyesterday,succeeded\n');
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('shows the previous report under its name until the new one is whole', async () => {
    const seen: string[] = [];
    const { file, replaced } = await writeReport(dir, 'nightly.csv', async function* () {
      yield 'deviceId,outcome\n';
      seen.push(await readFile(join(dir, 'nightly.csv'), 'utf8'));
      yield 'today,succeeded\n';
    });
    expect(file).to.equal(join(dir, 'nightly.csv'));
    expect(replaced, 'it replaced yesterday').to.equal(true);
    expect(seen).to.deep.equal(['deviceId,outcome\nyesterday,succeeded\n']);
    expect(await readFile(file, 'utf8')).to.equal('deviceId,outcome\ntoday,succeeded\n');
    expect(await readdir(dir)).to.deep.equal(['nightly.csv']);
  });

  it('leaves the previous report, and nothing else, when the rows fail part-way', async () => {
    const failing = writeReport(dir, 'nightly.csv', async function* () {
      yield 'deviceId,outcome\ntoday,succeeded\n';
      throw new Error('the ledger could not be read');
    });
    const error = await failing.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).to.equal('the ledger could not be read');
    expect(await readFile(join(dir, 'nightly.csv'), 'utf8')).to.equal(
      'deviceId,outcome\nyesterday,succeeded\n',
    );
    expect(await readdir(dir)).to.deep.equal(['nightly.csv']);
  });

  it('removes the temporary file of a writer on this machine that is no longer running, and only that', async () => {
    // A process that has exited: its pid is free (reused only after the pid space wraps).
    const dead = spawnSync(process.execPath, ['-e', '']).pid as number;
    const host = hostname();
    const left = [
      `.nightly.csv.${dead}@${host}.0badc0de.partial`, // a crashed writer here: removed
      `.nightly.csv.${process.pid}@${host}.1badc0de.partial`, // a writer here, still running: kept
      `.nightly.csv.${dead}@elsewhere.example.2badc0de.partial`, // a writer on another machine: kept
      `.other.csv.${dead}@${host}.3badc0de.partial`, // another report's: kept
    ];
    for (const f of left) await writeFile(join(dir, f), 'deviceId,outcome\nhalf');
    await writeReport(dir, 'nightly.csv', async function* () {
      yield 'deviceId,outcome\n';
    });
    expect((await readdir(dir)).sort()).to.deep.equal([...left.slice(1), 'nightly.csv'].sort());
  });
});
