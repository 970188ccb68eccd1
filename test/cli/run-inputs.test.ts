/**
 * `fleetbook run --input` of a number or a boolean: text that is none is refused (exit 2, nothing run) with what
 * the input takes. `0x10` ran with 16 and ` 5` with 5, and `yes` was "not a valid boolean" without a word of
 * what is. Child processes of the built CLI (dist/ must be built).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = `version: 1
name: typed-inputs
on: { manual: true }
inputs:
  ratio: { type: number, default: 1 }
  count: { type: integer, default: 1 }
  dry: { type: boolean, default: false }
steps:
  - id: say
    uses: log
    with: { message: '\${{ inputs.ratio }} \${{ inputs.count }} \${{ inputs.dry }}' }
`;

describe('fleetbook run --input of a number or a boolean (child process)', function () {
  this.timeout(60_000);
  const dir = tempDir('fb-run-inputs-');
  const file = join(dir, 'typed-inputs.yaml');
  writeFileSync(file, PLAYBOOK);
  const env = { FLEETBOOK_STATE: join(dir, 'state.db') };
  const NUMBER = 'is a number: give it in decimal, e.g. 12, -3 or 0.5';

  const CASES: [string, string][] = [
    ['ratio=0x10', `input \`ratio\` ${NUMBER} (got "0x10")`],
    ['ratio= 5', `input \`ratio\` ${NUMBER} (got " 5")`],
    ['ratio=1e400', `input \`ratio\` ${NUMBER} (got "1e400")`],
    ['ratio=Infinity', `input \`ratio\` ${NUMBER} (got "Infinity")`],
    ['count=0b11', 'input `count` is an integer: give it in decimal, e.g. 12 or -3 (got "0b11")'],
    ['dry=yes', 'input `dry` is a boolean: give true or false (got "yes")'],
    ['dry=TRUE', 'input `dry` is a boolean: give true or false (got "TRUE")'],
  ];
  for (const [input, error] of CASES)
    it(`--input '${input}': exit 2, saying what the input takes`, async () => {
      const r = await fleetbook(['run', file, '--input', input], env);
      expect([r.code, r.stdout, r.stderr]).to.deep.equal([2, '', `fleetbook: ${error}\n`]);
    });

  it('takes decimal numbers, an exponent, and true or false', async () => {
    const r = await fleetbook(
      ['run', file, '--input', 'ratio=-2.5e1', '--input', 'count=007', '--input', 'dry=true', '--json'],
      env,
    );
    expect([r.code, (JSON.parse(r.stdout) as { status: string }).status]).to.deep.equal([0, 'succeeded']);
    expect(r.stderr).to.include('"message":"-25 7 true"');
  });
});
