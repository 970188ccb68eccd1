/**
 * report.write replaces a report whole or not at all (src/actions/reports.ts): the rows go to a temporary file
 * beside it, renamed over the report's name once written. A reader of the name sees the previous report until
 * then; a write that fails part-way leaves the previous report as it was, and no temporary file behind.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
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
    const file = await writeReport(dir, 'nightly.csv', async function* () {
      yield 'deviceId,outcome\n';
      seen.push(await readFile(join(dir, 'nightly.csv'), 'utf8'));
      yield 'today,succeeded\n';
    });
    expect(file).to.equal(join(dir, 'nightly.csv'));
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
});
