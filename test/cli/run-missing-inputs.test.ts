/**
 * `fleetbook run` without a required input: refused (exit 2, nothing run) naming the inputs, and how the command
 * line gives them (`--input 'imeis=[...]' --input reason=...`): it said only that they were required. The daemon's
 * HTTP API says it of its JSON body (test/daemon/input-constraints.test.ts), the console of its form's fields
 * (test/console/start-run-form.test.ts). Child processes of the built CLI (dist/ must be built).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = `version: 1
name: suspend-lost
on: { manual: true }
inputs:
  imeis: { type: array, required: true }
  reason: { type: string, required: true }
  settings: { type: object, required: true, description: The settings to apply }
  count: { type: integer, default: 1 }
steps:
  - id: say
    uses: log
    with: { message: '\${{ inputs.reason }}' }
`;

describe('fleetbook run without a required input (child process)', function () {
  this.timeout(60_000);
  const dir = tempDir('fb-run-missing-inputs-');
  const file = join(dir, 'suspend-lost.yaml');
  writeFileSync(file, PLAYBOOK);
  const env = { FLEETBOOK_STATE: join(dir, 'state.db') };
  const refused = async (...inputs: string[]) => {
    const r = await fleetbook(['run', file, ...inputs.flatMap((i) => ['--input', i])], env);
    return [r.code, r.stdout, r.stderr];
  };

  it('names every missing input, and how --input gives each', async () => {
    expect(await refused()).to.deep.equal([
      2,
      '',
      "fleetbook: inputs `imeis` (array), `reason` (string), `settings` (object) are required: give them with --input 'imeis=[...]' --input reason=... --input 'settings={...}'\n",
    ]);
    expect(await refused('settings={}')).to.deep.equal([
      2,
      '',
      "fleetbook: inputs `imeis` (array), `reason` (string) are required: give them with --input 'imeis=[...]' --input reason=...\n",
    ]);
  });

  it('says what a lone missing input is, then how to give it', async () => {
    expect(await refused('imeis=["1"]', 'reason=lost')).to.deep.equal([
      2,
      '',
      "fleetbook: input `settings` (object) is required: The settings to apply; give it with --input 'settings={...}'\n",
    ]);
    expect(await refused('imeis=["1"]', 'settings={}')).to.deep.equal([
      2,
      '',
      'fleetbook: input `reason` (string) is required: give it with --input reason=...\n',
    ]);
  });

  it('ends a description that is a sentence before saying how', async () => {
    const rollout = join(import.meta.dirname, '..', '..', 'playbooks', 'rollout-sensor-configuration.yaml');
    const r = await fleetbook(['run', rollout], env);
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      "fleetbook: input `sensors` (array) is required: Resource ids (UUIDs) of the sensors to configure, the canary first. Give it with --input 'sensors=[...]'\n",
    ]);
  });
});
