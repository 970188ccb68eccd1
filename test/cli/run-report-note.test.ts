/**
 * `fleetbook run` and `fleetbook runs show` say where a `report.write` step wrote its file, and how many rows:
 * on a terminal the `report written` log line is below the level shown, so the file was nowhere in what the
 * user saw. The built binary in a child process, on a state file of its own (dist/ must be built; `npm test`
 * builds it).
 */
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { fleetbook } from '../helpers/cli.js';
import { stepLines, took } from '../helpers/step-lines.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = join(import.meta.dirname, '..', 'fixtures', 'report-note', 'write-a-report.yaml');

describe('fleetbook run: where a report was written (child process)', function () {
  this.timeout(60_000);
  let tmp: string;

  before(async () => {
    tmp = tempDir('fleetbook-run-report-note-');
    await copyFile(PLAYBOOK, join(tmp, 'report.yaml'));
  });

  it("the step's line, runs show and the summary name the file and its rows", async () => {
    const env = { FLEETBOOK_STATE: join(tmp, 'state.db') };
    // Run from the directory the reports go under: the file is named as the user would type it.
    const r = await fleetbook(['run', 'report.yaml'], env, [], tmp);
    expect(r.code, r.stderr).to.equal(0);
    const runId = /^run (\S+) of/.exec(r.stdout)![1]!;
    const json = await fleetbook(['runs', 'show', runId, '--json'], env, [], tmp);
    const s = JSON.parse(json.stdout) as RunSummary;
    const line = [
      '  save',
      'succeeded',
      took(s.steps.find((x) => x.id === 'save')),
      '(wrote reports/sites.csv, 2 rows)',
    ];
    expect(stepLines(r.stdout)).to.deep.include(line);
    const shown = await fleetbook(['runs', 'show', runId], env, [], tmp);
    expect(stepLines(shown.stdout)).to.deep.include(line);
    expect(s.steps.find((x) => x.id === 'save')).to.include({ note: 'wrote reports/sites.csv, 2 rows' });
  });

  it('a report that replaces one of the same name says so, in the note and in its output', async () => {
    const env = { FLEETBOOK_STATE: join(tmp, 'state.db') };
    // The first test wrote reports/sites.csv: this run writes it again.
    const r = await fleetbook(['run', 'report.yaml', '--json'], env, [], tmp);
    expect(r.code, r.stderr).to.equal(0);
    const s = JSON.parse(r.stdout) as RunSummary;
    expect(s.steps.find((x) => x.id === 'save')).to.include({
      note: 'wrote reports/sites.csv, 2 rows, replacing the report of that name',
    });
  });

  it('a dry run says it would write the report, not that it would call it for 0 devices', async () => {
    const env = { FLEETBOOK_STATE: join(tmp, 'state.db') };
    const r = await fleetbook(['run', 'report.yaml', '--dry-run'], env, [], tmp);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout.split('\n')).to.include('  would run report.write 1 time(s) (step save)');
  });
});
