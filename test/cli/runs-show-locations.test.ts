/**
 * `fleetbook runs show ID --devices` of a location report prints each located device's location on its line, as
 * the JSON form and the console give it: the text form printed `succeeded` and nothing of where. The built
 * binary in a child process, on the embedded emulator (dist/ must be built; `npm test` builds it).
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { deviceLine, fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const NIGHTLY = join(import.meta.dirname, '..', '..', 'playbooks', 'nightly-location-report.yaml');

interface Row {
  step: string;
  deviceId: string;
  outcome: string;
  data?: { latitude: number; longitude: number; radius?: number; time?: string; cached: boolean };
}

describe('runs show --devices: the locations of a report (child process)', function () {
  this.timeout(60_000);
  let tmp: string;

  before(async () => (tmp = tempDir('fleetbook-runs-show-locations-')));

  it('each located device is printed with its latitude, longitude, radius, time and whether cached', async () => {
    const env = {
      FLEETBOOK_STATE: join(tmp, 'state.db'),
      FLEETBOOK_REPORTS_DIR: join(tmp, 'reports'),
    };
    const r = await fleetbook(['run', NIGHTLY], env);
    expect(r.code, r.stderr).to.equal(0);
    const id = /^run (\S+) of/.exec(r.stdout)![1]!;
    const json = await fleetbook(['runs', 'show', id, '--devices', '--json'], env);
    const rows = (JSON.parse(json.stdout) as { deviceResults: Row[] }).deviceResults.filter(
      (d) => d.step === 'report' && d.data,
    );
    expect(rows.length).to.be.greaterThan(10);
    const text = (await fleetbook(['runs', 'show', id, '--devices'], env)).stdout.split('\n');
    for (const d of rows) expect(text).to.include(deviceLine(d));
    // Written out: latitude,longitude ±radius m at time (cached).
    expect(text.find((l) => l.includes(rows[0]!.deviceId))).to.match(
      /succeeded +-?\d+(\.\d+)?,-?\d+(\.\d+)? ±\d+ m at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ( \(cached\))?$/,
    );
  });
});
