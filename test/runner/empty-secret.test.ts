/**
 * `FLEETBOOK_SECRET_TEAM_WEBHOOK=` (set, but empty: a deployment's `$UNSET_VARIABLE`) counted as set: `fleetbook
 * run` suspended the devices, then failed at the webhook (`url is empty`), which a secret not set at all refuses
 * before anything is sent. An empty secret is now not set: a playbook that needs it is refused (exit 2, nothing
 * run), and one that tests whether it is set (`"TEAM_WEBHOOK" in secrets`) passes its step by. The built CLI, on
 * its embedded emulator.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const playbook = (name: string, guard: string) => `version: 1
name: ${name}
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: '0000123456-00001', devices: [{ id: '350260700638360', kind: IMEI }] }
  - id: tell
    if: '\${{ ${guard} }}'
    uses: notify.webhook
    with: { url: '\${{ secrets.TEAM_WEBHOOK }}', body: { text: suspended } }
`;

describe('fleetbook run: a secret set empty', () => {
  const dir = tempDir('fleetbook-empty-secret-');
  const env = { FLEETBOOK_LOG_LEVEL: 'warn', FLEETBOOK_SECRET_TEAM_WEBHOOK: '' };

  it('is not set: a playbook that needs it is refused before anything is sent', async () => {
    const file = join(dir, 'needs.yaml');
    await writeFile(file, playbook('needs-webhook', 'true'));
    const state = join(dir, 'needs.db');
    const r = await fleetbook(['run', file, '--json'], { ...env, FLEETBOOK_STATE: state });
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      'fleetbook: playbook needs-webhook reads secrets.TEAM_WEBHOOK, not set: set FLEETBOOK_SECRET_TEAM_WEBHOOK\n',
    ]);
    expect(existsSync(state), 'nothing run, no store opened').to.equal(false);
  });

  it('is not set: a step that reads it only when it is set is skipped', async () => {
    const file = join(dir, 'optional.yaml');
    await writeFile(file, playbook('optional-webhook', '"TEAM_WEBHOOK" in secrets'));
    const r = await fleetbook(['run', file, '--json'], { ...env, FLEETBOOK_STATE: join(dir, 'optional.db') });
    expect(r.code, r.stderr).to.equal(0);
    const summary = JSON.parse(r.stdout) as RunSummary;
    expect(summary.steps.map((s) => [s.id, s.status])).to.deep.equal([
      ['suspend', 'succeeded'],
      ['tell', 'skipped'],
    ]);
  });
});
