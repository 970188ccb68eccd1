/**
 * `fleetbook runs show ID --devices` writes a line per device in columns: step, device, outcome, then its error type
 * (or what it returned). The outcome's column was 9 wide, and `unconfirmed` (11) pushed that line's error type out
 * of line with the others; a line with nothing after its outcome ended in spaces. Child processes of the built CLI
 * (dist/ must be built) on a state file written here.
 */
import { expect } from 'chai';
import { fleetbook, stateFile } from '../helpers/cli.js';

const RUN = 'c0000000-0000-4000-8000-000000000001';
const AT = '2026-11-30T02:00:00.000Z';

describe('fleetbook runs show --devices: its columns (child process)', function () {
  this.timeout(30_000);
  const { env } = stateFile((store) => {
    store.createRun({
      id: RUN,
      playbook: 'suspend',
      status: 'succeeded',
      trigger: { type: 'manual' },
      inputs: {},
      startedAt: AT,
      endedAt: AT,
    });
    store.saveStep(
      RUN,
      'suspend',
      { status: 'succeeded' },
      {
        step: 'suspend',
        at: AT,
        groups: [
          { kind: 'imei', ids: ['356758880000001'], outcome: 'succeeded', attempts: 1 },
          {
            kind: 'imei',
            ids: ['356758880000002'],
            outcome: 'unconfirmed',
            errorType: 'OUTCOME UNKNOWN',
            attempts: 1,
          },
          {
            kind: 'imei',
            ids: ['356758880000003'],
            outcome: 'failed',
            errorType: 'INVALID DEVICE STATE',
            attempts: 1,
          },
        ],
      },
    );
  });

  it('puts every error type in one column, and ends no line in spaces', async () => {
    const r = await fleetbook(['runs', 'show', RUN, '--devices'], env);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    const lines = r.stdout.split('\n').filter((l) => l.includes('35675888000000'));
    expect(lines).to.have.length(3);
    expect(
      lines.filter((l) => l !== l.trimEnd()),
      'lines ending in spaces',
    ).to.deep.equal([]);
    const column = (type: string) => lines.find((l) => l.endsWith(type))!.indexOf(type);
    expect(column('OUTCOME UNKNOWN'), 'where the error types begin').to.equal(column('INVALID DEVICE STATE'));
  });
});
