/**
 * A case that expected the `output` of a step that gives none (a `set`, a `parallel`, a time `wait`) ran the
 * playbook, then failed with "expected an object, got null", as if the step had failed or been skipped: the
 * mistake was the test's, and nothing said so or what to check instead. Such an expectation is now refused when
 * the file loads, at its line, saying what the step gives; an `output` of a step that gives one is checked as
 * before. Real emulator, in-process.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { runTests } from '../../src/testing/index.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = [
  'version: 1',
  'name: outputs',
  'on: { manual: true }',
  'steps:',
  '  - id: count',
  '    set: { n: 2 }',
  '  - id: pause',
  '    wait: 1ms',
  '  - id: both',
  '    parallel:',
  '      - id: one',
  '        uses: log',
  "        with: { message: 'n is ${{ vars.n }}' }",
  '      - id: two',
  '        uses: log',
  "        with: { message: 'two' }",
  '',
].join('\n');

async function run(lines: string[]): Promise<{ file: string; lines: string[] }> {
  const dir = tempDir('fleetbook-test-no-output-');
  await writeFile(join(dir, 'outputs.yaml'), PLAYBOOK);
  const file = join(dir, 'outputs.test.yaml');
  await writeFile(file, [...lines, ''].join('\n'));
  const out: string[] = [];
  await runTests([file], { write: (l) => out.push(...l.split('\n')) });
  return { file, lines: out };
}

describe('fleetbook test: the output of a step that gives none', () => {
  it('checks the output of a step that gives one', async () => {
    const { file, lines } = await run([
      'cases:',
      '  - name: the log says n',
      '    expect:',
      '      steps:',
      "        one: { output: { message: 'n is 2' } }",
    ]);
    expect(lines, lines.join('\n')).to.deep.equal([`ok   ${file}: the log says n`, '1 passed, 0 failed']);
  });

  it('refuses, at its line, the output of a set, a time wait and a parallel', async () => {
    const { file, lines } = await run([
      'cases:',
      '  - name: outputs of steps that give none',
      '    expect:',
      '      steps:',
      '        count: { output: { n: 2 } }',
      '        pause: { output: {} }',
      '        both: { output: {} }',
    ]);
    expect(
      lines.filter((l) => !l.startsWith('      ')),
      lines.join('\n'),
    ).to.deep.equal([
      `FAIL ${file}: outputs of steps that give none`,
      `    ${file}:5:18: step \`count\` (set) gives no output: its values are the run's \`vars\`; check what a later step makes of them [schema]`,
      `    ${file}:6:18: step \`pause\` (a time wait) gives no output: check the steps after it [schema]`,
      `    ${file}:7:17: step \`both\` (parallel) gives no output: check the steps inside it [schema]`,
      '0 passed, 1 failed',
    ]);
  });
});
