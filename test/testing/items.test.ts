/**
 * What a playbook test can say of a step's items (`expect.steps.<id>.items`): each device's result, as
 * `steps.<id>.items` gives it (outcome, error, kind...), by device or as the whole list; a listing's devices; a
 * dry run's planned devices; and where they differ. Real emulator, in-process.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { runTests } from '../../src/testing/index.js';
import { tempDir } from '../helpers/temp.js';

async function run(files: string[]): Promise<{ lines: string[]; passed: number; failed: number }> {
  const lines: string[] = [];
  const totals = await runTests(files, { write: (l) => lines.push(...l.split('\n')) });
  return { lines, ...totals };
}

/**
 * Suspends an active and a pending device (which fails), then restores two devices one an iteration; lists the
 * pending devices (whose items a step reads) and the active ones (whose items nothing reads).
 */
const PLAYBOOK = [
  'version: 1',
  'name: items',
  'on: { manual: true }',
  'steps:',
  '  - id: pending',
  '    uses: devices.list',
  "    with: { accountName: '0000123456-00001', currentState: pending }",
  '  - id: active',
  '    uses: devices.list',
  "    with: { accountName: '0000123456-00001', currentState: active }",
  '  - id: suspend',
  '    uses: devices.suspend',
  '    with:',
  "      accountName: '0000123456-00001'",
  "      devices: [{ id: '350260700638360', kind: IMEI }, { id: '350260700638410', kind: IMEI }]",
  '  - id: each',
  '    forEach:',
  "      items: [{ id: '350260700638378', kind: IMEI }, { id: '350260700638360', kind: IMEI }]",
  '      steps:',
  '        - id: restore',
  '          uses: devices.restore',
  "          with: { accountName: '0000123456-00001', devices: ['${{ item }}'] }",
  '  - id: say',
  '    uses: log',
  "    with: { message: '${{ size(steps.pending.items) }} pending' }",
  '',
].join('\n');

/** `items.yaml` and `items.test.yaml` (`lines`) in a new directory; the test file's path. */
async function testFile(lines: string[]): Promise<string> {
  const dir = tempDir('fleetbook-test-items-');
  await writeFile(join(dir, 'items.yaml'), PLAYBOOK);
  const file = join(dir, 'items.test.yaml');
  await writeFile(file, [...lines, ''].join('\n'));
  return file;
}

describe('fleetbook test: the items of a step', () => {
  it("checks each device's result by device, or the whole list, inside a forEach too", async () => {
    const file = await testFile([
      'cases:',
      '  - name: which devices were suspended, which failed and why',
      '    expect:',
      '      steps:',
      '        suspend:',
      '          items:',
      "            '350260700638360': { outcome: succeeded, kind: imei }",
      "            '350260700638410': { outcome: failed, error: STATE NOT CHANGED, errorClass: /./ }",
      '        # Inside the forEach: every iteration, each device once, in the order of the device ids.',
      '        restore:',
      '          items:',
      "            - { id: '350260700638360', outcome: succeeded }",
      "            - { id: '350260700638378', outcome: succeeded }",
    ]);
    const r = await run([file]);
    expect(r.lines, r.lines.join('\n')).to.deep.equal([
      `ok   ${file}: which devices were suspended, which failed and why`,
      '1 passed, 0 failed',
    ]);
  });

  it('tells, at the line of each device, where its item differs, and which devices have one', async () => {
    const file = await testFile([
      'cases:',
      '  - name: the wrong devices',
      '    expect:',
      '      steps:',
      '        suspend:',
      '          items:',
      "            '350260700638360': { outcome: failed }",
      "            '350260700638410': { error: /INVALID/ }",
      "            '350260700638999': { outcome: succeeded }",
      '        restore:',
      "          items: [{ id: '350260700638360' }, { id: '350260700638378', outcome: failed }]",
    ]);
    const r = await run([file]);
    expect(r.lines, r.lines.join('\n')).to.deep.equal([
      `FAIL ${file}: the wrong devices`,
      `    ${file}:7: the items of step suspend do not match at 350260700638360.outcome: expected "failed", got "succeeded"`,
      `    ${file}:8: the items of step suspend do not match at 350260700638410.error: expected /INVALID/, got "STATE NOT CHANGED"`,
      `    ${file}:9: step suspend has no item of device 350260700638999: its items are those of 350260700638360, 350260700638410`,
      `    ${file}:11: the items of step restore (each device's latest result, in the order of their ids) do not match at [1].outcome: expected "failed", got "succeeded"`,
      '0 passed, 1 failed',
    ]);
  });

  it('gives, in a dry run, the devices each planned step would have acted on', async () => {
    const file = await testFile([
      'cases:',
      '  - name: planned',
      '    dryRun: true',
      '    expect:',
      '      steps:',
      '        suspend:',
      '          status: planned',
      '          items:',
      "            - { id: '350260700638360', outcome: skipped, error: DRY RUN }",
      "            - { id: '350260700638410', outcome: skipped, error: DRY RUN }",
      '        restore:',
      "          items: { '350260700638378': { error: DRY RUN }, '350260700638360': { error: DRY RUN } }",
    ]);
    const r = await run([file]);
    expect(r.lines, r.lines.join('\n')).to.deep.equal([`ok   ${file}: planned`, '1 passed, 0 failed']);
  });

  it('refuses, at file:line:col, a member no item has, items that check nothing, and items of a step without', async () => {
    const file = await testFile([
      'cases:',
      '  - name: mistakes',
      '    expect:',
      '      steps:',
      "        say: { items: [{ id: '350260700638360' }] }",
      "        suspend: { items: { '350260700638360': { outcom: succeeded } } }",
      '        restore: { items: {} }',
      '        each: { items: [{ outcome: done }] }',
    ]);
    const r = await run([file]);
    expect(r.lines.filter((l) => l.startsWith(`    ${file}:`))).to.deep.equal(
      [
        '6:50: unknown field `outcom` (did you mean `outcome`?)',
        '7:27: items checks nothing: give a device and what its item must have, or the list of the items',
        '8:36: expect.steps.each.items[0].outcome must be one of "accepted", "succeeded", "failed", "skipped", "unconfirmed"',
      ].map((l) => `    ${file}:${l} [schema]`),
    );
    const again = await testFile([
      'cases:',
      '  - name: a log step, a listing',
      '    expect:',
      '      steps:',
      "        say: { items: [{ id: '350260700638360' }] }",
      "        pending: { items: [{ id: '350260700638410' }] }",
    ]);
    const s = await run([again]);
    expect(s.lines.filter((l) => !l.startsWith('      '))).to.deep.equal([
      `FAIL ${again}: a log step, a listing`,
      `    ${again}:5:16: step \`say\` (log) has no items: a step has items when it acts on devices (each device's result) [schema]`,
      `    ${again}:6:20: the items of step \`pending\` (devices.list) are the devices it found, which the run does not keep once it ends: check its output (\`count\`), or the items of the step that takes them [schema]`,
      '0 passed, 1 failed',
    ]);
  });
});
