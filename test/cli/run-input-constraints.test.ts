/**
 * `fleetbook run --input` of a value that breaks its input's constraints (uniqueItems, items.pattern, minItems,
 * a bound): refused with exit 2 before anything is sent, naming the input, the item and the keyword. The
 * example rollout took a sensor id given twice, and configured that sensor twice. Child processes of the built
 * CLI (dist/ must be built) on the example playbook, against its embedded emulator.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const ROLLOUT = join(import.meta.dirname, '..', '..', 'playbooks', 'rollout-sensor-configuration.yaml');
const A = '30ca92f4-cca3-467f-b9ef-100000000001';
const B = '1963d0fb-5aba-441c-88e1-100000000003';

describe('fleetbook run --input that breaks a constraint (child process)', function () {
  this.timeout(60_000);
  const dir = tempDir('fb-run-input-constraints-');
  const env = { FLEETBOOK_STATE: join(dir, 'state.db') };

  const CASES: [string, string][] = [
    [`sensors=["${A}", "${B}", "${A}"]`, `input \`sensors\`: item 2 "${A}" is given twice (uniqueItems)`],
    [
      `sensors=["${A}", "sensor-2"]`,
      'input `sensors`: item 1 "sensor-2" does not match `^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$` (items.pattern)',
    ],
    [`sensors=["${A}", 1]`, 'input `sensors`: item 1 (1) is not of type string (items.type)'],
    ['sensors=[]', 'input `sensors`: has 0 items, fewer than 1 (minItems)'],
  ];
  for (const [input, error] of CASES)
    it(`--input '${input.slice(0, 60)}': exit 2, nothing run`, async () => {
      const r = await fleetbook(['run', ROLLOUT, '--input', input], env);
      expect([r.code, r.stdout, r.stderr]).to.deep.equal([2, '', `fleetbook: ${error}\n`]);
    });

  it('runs the rollout on distinct sensor ids', async () => {
    const r = await fleetbook(['run', ROLLOUT, '--json', '--input', `sensors=["${A}"]`], env);
    expect([r.code, (JSON.parse(r.stdout) as { status: string }).status]).to.deep.equal([0, 'succeeded']);
  });
});
