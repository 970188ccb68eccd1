/**
 * `fleetbook runs show ID` filters a run's device results as the console's table does: `--step`, `--outcome`,
 * `--error-type`, `--device` (a part of the id), each implying `--devices`, in the text and the JSON forms. A
 * step or an error type the run cannot have is refused, exit 2, naming what was meant. Before, every device came
 * out, and finding the failed ones of a million meant piping a million lines through grep. The built binary in a
 * child process, on the embedded emulator (dist/ must be built; `npm test` builds it): the shipped nightly report,
 * 43 devices, one of them failed with SVC DEVICE TYPE CHECK FAILED.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const NIGHTLY = join(import.meta.dirname, '..', '..', 'playbooks', 'nightly-location-report.yaml');
const TYPE = 'SVC DEVICE TYPE CHECK FAILED';

interface Row {
  step: string;
  deviceId: string;
  outcome: string;
  errorType?: string;
}

describe('runs show: its device results filtered (child process)', function () {
  this.timeout(60_000);
  let env: Record<string, string>;
  let id: string;
  let all: Row[];

  before(async () => {
    const tmp = tempDir('fleetbook-runs-show-filters-');
    env = { FLEETBOOK_STATE: join(tmp, 'state.db'), FLEETBOOK_REPORTS_DIR: join(tmp, 'reports') };
    const r = await fleetbook(['run', NIGHTLY], env);
    expect(r.code, r.stderr).to.equal(0);
    id = /^run (\S+) of/.exec(r.stdout)![1]!;
    const json = await fleetbook(['runs', 'show', id, '--devices', '--json'], env);
    all = (JSON.parse(json.stdout) as { deviceResults: Row[] }).deviceResults;
    expect(all.filter((d) => d.outcome === 'failed').map((d) => d.errorType)).to.deep.equal([TYPE]);
    expect(all.filter((d) => d.outcome === 'succeeded').length).to.be.greaterThan(10);
  });

  /** The device lines of `runs show` with `flags`: each line's device id. */
  const shown = async (...flags: string[]) => {
    const r = await fleetbook(['runs', 'show', id, ...flags], env);
    expect([r.code, r.stderr], flags.join(' ')).to.deep.equal([0, '']);
    return r.stdout
      .split('\n')
      .map((l) => /^ {2}(\S+) +(\d{10,}) +(\S+)/.exec(l))
      .filter((m) => m !== null)
      .map((m) => m[2]);
  };
  const ids = (f: (d: Row) => boolean) => all.filter(f).map((d) => d.deviceId);

  it('--outcome, --error-type, --step and --device each keep their devices, and imply --devices', async () => {
    const failed = ids((d) => d.outcome === 'failed');
    expect(await shown('--outcome', 'failed')).to.deep.equal(failed);
    expect(await shown('--error-type', TYPE)).to.deep.equal(failed);
    expect(await shown('--step', 'report', '--outcome', 'succeeded')).to.deep.equal(
      ids((d) => d.step === 'report' && d.outcome === 'succeeded'),
    );
    const one = all[3]!.deviceId;
    expect(await shown('--device', one.slice(-6))).to.deep.equal(
      ids((d) => d.deviceId.includes(one.slice(-6))),
    );
    // A type the catalog knows that no device of the run has: no device, not an error, and said.
    expect(await shown('--error-type', 'SVC CACHE UNAVAILABLE')).to.deep.equal([]);
    const none = await fleetbook(['runs', 'show', id, '--step', 'report', '--outcome', 'skipped'], env);
    expect(none.stdout).to.match(/\n {2}no device results match --step "report" --outcome "skipped"\n$/);
  });

  it('--json gives only the devices the filters keep', async () => {
    const r = await fleetbook(['runs', 'show', id, '--json', '--outcome', 'failed'], env);
    expect(r.code, r.stderr).to.equal(0);
    const rows = (JSON.parse(r.stdout) as { deviceResults: Row[] }).deviceResults;
    expect(rows.map((d) => [d.deviceId, d.outcome, d.errorType])).to.deep.equal(
      all.filter((d) => d.outcome === 'failed').map((d) => [d.deviceId, d.outcome, d.errorType]),
    );
  });

  it('--csv writes the devices the filters keep as CSV, with what the step returned in columns of its own', async () => {
    const r = await fleetbook(['runs', 'show', id, '--csv', '--step', 'report'], env);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    const [head, ...lines] = r.stdout.trimEnd().split('\n');
    const columns = head!.split(',');
    expect(columns.slice(0, 10)).to.deep.equal([
      'runId',
      'step',
      'deviceId',
      'kind',
      'outcome',
      'errorType',
      'errorClass',
      'attempts',
      'at',
      'requestId',
    ]);
    expect(columns).to.include.members(['latitude', 'longitude']);
    const at = (name: string) => columns.indexOf(name);
    const rows = lines.map((l) => l.split(','));
    expect(rows.map((c) => [c[at('deviceId')], c[at('outcome')]])).to.deep.equal(
      all.filter((d) => d.step === 'report').map((d) => [d.deviceId, d.outcome]),
    );
    expect(rows.filter((c) => c[at('latitude')] !== '').length).to.equal(
      all.filter((d) => d.step === 'report' && d.outcome === 'succeeded').length,
    );
    const failed = await fleetbook(['runs', 'show', id, '--csv', '--outcome', 'failed'], env);
    expect(
      failed.stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((l) => l.split(',')[2]),
    ).to.deep.equal(ids((d) => d.outcome === 'failed'));
  });

  it('refuses a step the run has not, an unknown error type, an outcome that is none, --csv with --json, exit 2', async () => {
    const cases: [string[], string][] = [
      [
        ['--step', 'reports'],
        `fleetbook: --step: run ${id} (nightly-location-report) has no step \`reports\` (did you mean \`report\`?)`,
      ],
      [
        ['--error-type', 'DEVICE TYPE CHECK FAILED'],
        `fleetbook: --error-type: no device of run ${id} has error type \`DEVICE TYPE CHECK FAILED\``,
      ],
      [
        ['--outcome', 'fail'],
        'fleetbook: --outcome must be one of accepted, succeeded, failed, skipped, unconfirmed (got "fail")',
      ],
      [['--device', ''], 'fleetbook: --device is empty (got ""): give a value, or leave it out'],
      [['--csv', '--json'], 'fleetbook: --csv and --json: give one of them'],
    ];
    for (const [flags, says] of cases) {
      const r = await fleetbook(['runs', 'show', id, ...flags], env);
      expect([r.code, r.stdout], flags.join(' ')).to.deep.equal([2, '']);
      expect(r.stderr, flags.join(' ')).to.include(says);
    }
  });
});
