/**
 * `fleetbook device ID`: every result the ledger holds for one device, newest first, across every run and step
 * that touched it, as the console's device page shows it; on a terminal, where there was no way to ask but SQL.
 * The built binary in child processes (dist/ must be built; `npm test` builds it), on the embedded emulator: the
 * shipped nightly report run twice, 43 devices each time, one of them failed with SVC DEVICE TYPE CHECK FAILED.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const NIGHTLY = join(import.meta.dirname, '..', '..', 'playbooks', 'nightly-location-report.yaml');
const TYPE = 'SVC DEVICE TYPE CHECK FAILED';

interface Result {
  runId: string;
  playbook: string;
  runStatus: string;
  step: string;
  deviceId: string;
  outcome: string;
  errorType?: string;
  data?: { latitude: number; longitude: number };
}

describe('fleetbook device: a device across every run (child process)', function () {
  this.timeout(60_000);
  let env: Record<string, string>;
  const runs: string[] = [];
  let located: string;
  let failed: string;

  before(async () => {
    const tmp = tempDir('fleetbook-device-history-');
    env = { FLEETBOOK_STATE: join(tmp, 'state.db'), FLEETBOOK_REPORTS_DIR: join(tmp, 'reports') };
    for (let i = 0; i < 2; i++) {
      const r = await fleetbook(['run', NIGHTLY], env);
      expect(r.code, r.stderr).to.equal(0);
      runs.unshift(/^run (\S+) of/.exec(r.stdout)![1]!);
    }
    const show = await fleetbook(['runs', 'show', runs[0]!, '--devices', '--json'], env);
    const rows = (JSON.parse(show.stdout) as { deviceResults: Result[] }).deviceResults;
    located = rows.find((d) => d.step === 'report' && d.data)!.deviceId;
    failed = rows.find((d) => d.errorType === TYPE)!.deviceId;
  });

  it('lists its results newest first: when, the run, its playbook, the step, the outcome and what it gave', async () => {
    const r = await fleetbook(['device', located], env);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).to.equal(`device ${located}: 2 results, newest first`);
    expect(lines[1]).to.match(/^AT +RUN ID +PLAYBOOK +STEP +OUTCOME +ERROR TYPE OR RESULT$/);
    expect(lines.slice(2).map((l) => l.split(/ {2,}/).slice(1, 5))).to.deep.equal(
      runs.map((id) => [id, 'nightly-location-report', 'report', 'succeeded']),
    );
    expect(lines[2]).to.match(/succeeded +-?\d+(\.\d+)?,-?\d+(\.\d+)? ±\d+ m at \S+/);
    const bad = await fleetbook(['device', failed], env);
    expect(bad.stdout.trimEnd().split('\n').slice(2)).to.have.length(2);
    for (const l of bad.stdout.trimEnd().split('\n').slice(2))
      expect(l).to.match(/ failed +SVC DEVICE TYPE CHECK FAILED$/);
  });

  it('--json gives the results as the console reads them, --limit at most that many', async () => {
    const r = await fleetbook(['device', located, '--json', '--limit', '1'], env);
    expect(r.code, r.stderr).to.equal(0);
    const out = JSON.parse(r.stdout) as { deviceId: string; results: Result[] };
    expect(out.deviceId).to.equal(located);
    expect(
      out.results.map((x) => [x.runId, x.playbook, x.runStatus, x.step, x.deviceId, x.outcome]),
    ).to.deep.equal([[runs[0], 'nightly-location-report', 'succeeded', 'report', located, 'succeeded']]);
    expect(out.results[0]!.data).to.have.property('latitude');
  });

  it('says when the ledger holds nothing of a device, and by which identifier it names devices', async () => {
    const r = await fleetbook(['device', '990000000000001'], env);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(r.stdout).to.equal(
      'no results recorded for device 990000000000001 (the ledger names a device by the identifier its step sent: an IMEI, an ICCID, ...)\n',
    );
    const json = await fleetbook(['device', '990000000000001', '--json'], env);
    expect(JSON.parse(json.stdout)).to.deep.equal({ deviceId: '990000000000001', results: [] });
  });

  it('warns of a FLEETBOOK_ variable it does not read, naming the one meant', async () => {
    const r = await fleetbook(['device', located, '--limit', '1'], { ...env, FLEETBOOK_STATEE: 'x' });
    expect(r.code).to.equal(0);
    expect(r.stderr).to.equal(
      'fleetbook: warning: FLEETBOOK_STATEE is set, but fleetbook reads no such variable (did you mean FLEETBOOK_STATE?)\n',
    );
  });

  it('refuses an empty id and a limit out of range, exit 2', async () => {
    const cases: [string[], string][] = [
      [['device', ' '], 'fleetbook: the device id is empty (got " "): give a device id\n'],
      [
        ['device', located, '--limit', '0'],
        'fleetbook: --limit must be a whole number from 1 to 1000 (got "0")\n',
      ],
    ];
    for (const [args, says] of cases) {
      const r = await fleetbook(args, env);
      expect([r.code, r.stdout, r.stderr], args.join(' ')).to.deep.equal([2, '', says]);
    }
  });
});
