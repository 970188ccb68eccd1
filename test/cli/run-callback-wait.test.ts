/**
 * `fleetbook run` of a playbook that waits for a callback with no `poll`: no callback can reach a run of the
 * CLI, which has no listener. It says so as the run starts, naming the step, and the wait fails when it is
 * reached rather than sit out its timeout (two hours here). The built binary in a child process, against the
 * embedded emulator (dist/ must be built; `npm test` builds it).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = `version: 1
name: wait-for-location
on: { manual: true }
steps:
  - id: report
    uses: location.createReport
    with:
      accountName: '0000123456-00001'
      deviceList: [{ id: '350260700638360', kind: imei }]
      cacheMode: '1'
  - id: located
    wait:
      event:
        service: Location
        match: '\${{ event.locationReportResponse.txid == steps.report.output.reports[0].txid }}'
      timeout: 2h
  - id: polled
    wait:
      event: { service: Location }
      timeout: 1m
      poll:
        uses: location.getReportStatus
        with: { accountName: '0000123456-00001', txid: '\${{ steps.report.output.reports[0].txid }}' }
        until: '\${{ event.status == "COMPLETED" }}'
`;

const WHY =
  'no Location callback can reach this run: it runs where no callback listener is (`fleetbook run`, `fleetbook test`). Run the playbook under `fleetbook serve`, or give the wait a `poll` that reads what the callback would tell';

describe('fleetbook run: a wait for a callback no listener can receive (child process)', function () {
  this.timeout(60_000);
  let tmp: string;

  before(async () => {
    tmp = tempDir('fleetbook-run-callback-wait-');
    await writeFile(join(tmp, 'wait.yaml'), PLAYBOOK);
  });

  it('warns as the run starts, naming the step, and fails the wait when reached, not at its timeout', async () => {
    const env = { FLEETBOOK_STATE: join(tmp, 'state.db'), FLEETBOOK_LOG_LEVEL: 'info' };
    const r = await fleetbook(['run', join(tmp, 'wait.yaml')], env);
    expect(r.code, r.stderr).to.equal(1);
    const logged = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const warned = logged.filter((l) => l.level === 'warn' && l.service === 'Location');
    // The wait with a poll can end here: only the other is named.
    expect(warned.map((l) => l.step)).to.deep.equal(['located']);
    // In the words of the step's own failure.
    expect(warned[0]!.message).to.equal(`step \`located\` will fail when reached: ${WHY}`);
    expect(logged.indexOf(warned[0]!)).to.be.below(logged.findIndex((l) => l.message === 'run started'));
    expect(r.stdout).to.include(`error: step \`located\` failed: ${WHY}`);
    expect(logged.some((l) => l.message === 'waiting')).to.equal(false);
  });
});
