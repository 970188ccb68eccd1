/**
 * `string()` of a timestamp or a duration, CEL's standard conversions: a window of usage ending at the run's start
 * is `string(timestamp(run.startedAt) - duration("24h"))`. Both were refused by `fleetbook validate` ("found no
 * matching overload for 'string(google.protobuf.Timestamp)'"), and a timestamp left unconverted passed validate
 * and failed the step at run time (`earliest must be string`). Child processes of the built CLI (dist/ must be
 * built), on the embedded emulator.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = `version: 1
name: usage-window
on: { manual: true }
steps:
  - id: usage
    uses: devices.usage
    with:
      deviceId: { id: '350260700638360', kind: imei }
      earliest: '\${{ string(timestamp(run.startedAt) - duration("24h")) }}'
      latest: '\${{ run.startedAt }}'
  - id: say
    uses: log
    with:
      message: '\${{ string(timestamp("2026-01-05T14:00:00Z") - duration("14h")) }} \${{ string(timestamp("2026-01-05T14:00:00.250Z")) }} \${{ string(duration("90m")) }}'
`;

describe('string() of a timestamp or a duration (child process)', function () {
  this.timeout(60_000);
  const dir = tempDir('fb-run-timestamp-string-');
  const file = join(dir, 'usage-window.yaml');
  writeFileSync(file, PLAYBOOK);
  const env = { FLEETBOOK_STATE: join(dir, 'state.db') };

  it('validates', async () => {
    const r = await fleetbook(['validate', file], env);
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([0, '', '1 playbook checked: 0 errors, 0 warnings\n']);
  });

  it('refuses a timestamp left unconverted where an argument takes a string, at its line and column', async () => {
    const raw = join(dir, 'usage-raw.yaml');
    writeFileSync(
      raw,
      PLAYBOOK.replace(
        'string(timestamp(run.startedAt) - duration("24h"))',
        'timestamp(run.startedAt) - duration("24h")',
      ),
    );
    const r = await fleetbook(['validate', raw], env);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.include(
      `${raw}:9:18: \`earliest\` of devices.usage takes a string; this expression gives a timestamp: write \`string(...)\` of it, which gives its RFC 3339 text (\`2026-01-05T00:00:00Z\`) [type]`,
    );
  });

  it('runs: RFC 3339 in UTC for a timestamp, seconds for a duration', async () => {
    const r = await fleetbook(['run', file, '--json'], env);
    expect([r.code, (JSON.parse(r.stdout) as { status: string }).status], r.stderr).to.deep.equal([
      0,
      'succeeded',
    ]);
    expect(r.stderr).to.include('"message":"2026-01-05T00:00:00Z 2026-01-05T14:00:00.25Z 5400s"');
  });
});
