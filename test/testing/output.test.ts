/**
 * What a playbook test can say of a step beyond its status and devices: what it gave (`output`), matched as a
 * webhook's body is, those of a step inside a forEach one per iteration; a step the run never reached
 * (`unreached`); and a test file's mistakes named by their whole place in the file.
 */
import { writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { expect } from 'chai';
import { matches, mismatch } from '../../src/testing/expect.js';
import { runTests } from '../../src/testing/index.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'testing-output');

async function run(files: string[]): Promise<{ lines: string[]; passed: number; failed: number }> {
  const lines: string[] = [];
  const totals = await runTests(files, { write: (l) => lines.push(...l.split('\n')) });
  return { lines, ...totals };
}

/** A test file of `text` in a new directory, of the fixtures' `outputs.yaml` playbook. */
async function testFile(text: string): Promise<string> {
  const dir = tempDir('fleetbook-test-output-');
  const file = join(dir, 'x.test.yaml');
  await writeFile(file, `playbook: ${relative(dir, join(FIXTURES, 'outputs.yaml'))}\n${text}`);
  return file;
}

describe('fleetbook test: what a step gave', () => {
  it("matches a step's output, a forEach's inner step's one per iteration, and tells where it differs", async () => {
    const file = join(FIXTURES, 'outputs.test.yaml');
    const r = await run([file]);
    expect(r.lines).to.deep.equal([
      `ok   ${file}: matches what the steps gave`,
      `FAIL ${file}: tells where what a step gave differs`,
      `    ${file}:19: the output of step devices does not match at count: expected 12, got 43`,
      `    ${file}:21: the output of step say (one for each iteration it succeeded in, in the order of the items) does not match: expected 1 item(s), got 2: [{"message":"item a of 43"},{"message":"item c of 43"}]`,
      `    ${file}:23: the output of step after does not match at message: expected /^before/, got "after"`,
      `ok   ${file}: a step the run never reached`,
      `FAIL ${file}: a step the run never reached gave nothing`,
      `    ${file}:38: step after gave no output: the run never reached it`,
      '2 passed, 2 failed',
    ]);
  });

  it('shows a big output cut short, and a member it lacks by the members it has', () => {
    const big = { devices: Array.from({ length: 500 }, (_, i) => ({ id: `35026070063${i}` })) };
    const m = mismatch({ devices: [{ id: 'x' }] }, big);
    expect(m?.at).to.equal('devices');
    expect(m?.why).to.match(/^expected 1 item\(s\), got 500: \[\{"id":"350260700630"\}.*…$/);
    expect(m?.why.length).to.be.below(200);
    expect(mismatch({ level: 'warn' }, { message: 'a' })).to.deep.equal({
      at: 'level',
      why: 'expected "warn", it has no level (it has message)',
    });
    expect(mismatch([{ a: { b: [1, '/^x/'] } }], [{ a: { b: [1, 'yz'] } }])).to.deep.equal({
      at: '[0].a.b[1]',
      why: 'expected /^x/, got "yz"',
    });
    expect(mismatch({ rows: 3 }, { rows: '3' })).to.equal(undefined);
    expect(matches({ rows: 3 }, { rows: '4' })).to.equal(false);
  });

  it('says an output larger than a run keeps cannot be checked, and checks what a later step made of it', async () => {
    const dir = tempDir('fleetbook-test-output-');
    await writeFile(
      join(dir, 'big.yaml'),
      [
        'version: 1',
        'name: big',
        'on: { manual: true }',
        'steps:',
        '  - id: devices',
        '    uses: devices.list',
        "    with: { accountName: '0000123456-00001' }",
        '  - id: counted',
        '    uses: log',
        "    with: { message: '${{ size(steps.devices.output.devices) }} devices' }",
        '',
      ].join('\n'),
    );
    const file = join(dir, 'big.test.yaml');
    await writeFile(
      file,
      [
        'world: { accounts: 1, devicesPerAccount: 2000 }',
        'cases:',
        '  - name: a listing of 2000 records',
        '    expect:',
        '      steps:',
        '        devices: { output: { devices: /350260700638360/ } }',
        '        counted: { output: { message: 2000 devices } }',
        '',
      ].join('\n'),
    );
    const r = await run([file]);
    expect(r.lines.slice(0, 2)).to.deep.equal([
      `FAIL ${file}: a listing of 2000 records`,
      `    ${file}:6: the output of step devices is larger than a run keeps (262144 characters of JSON), and cannot be checked: check what a later step makes of it`,
    ]);
    expect(r.lines.at(-1)).to.equal('0 passed, 1 failed');
  });

  it('gives null as the output of a step its `if` skipped, as the playbook reads it', async () => {
    const file = await testFile(
      'cases:\n  - name: a\n    expect:\n      steps:\n        stop: { status: skipped, output: null }\n',
    );
    const r = await run([file]);
    expect(r.lines, r.lines.join('\n')).to.deep.equal([`ok   ${file}: a`, '1 passed, 0 failed']);
  });

  it('refuses an expectation of a step the playbook does not have, with the closest name', async () => {
    const file = await testFile(
      'cases:\n  - name: a\n    expect:\n      steps:\n        devics: { output: { count: 1 } }\n',
    );
    const r = await run([file]);
    expect(r.lines.slice(0, 2)).to.deep.equal([
      `FAIL ${file}: a`,
      `    ${file}:6:9: the playbook has no step \`devics\`: did you mean \`devices\`? [schema]`,
    ]);
  });
});

describe('fleetbook test: where a webhook body or a report row differs', () => {
  it('names the member of each body, and of the first row, that does not match', async () => {
    const dir = tempDir('fleetbook-test-output-');
    await writeFile(
      join(dir, 'tell.yaml'),
      [
        'version: 1',
        'name: tell',
        'on: { manual: true }',
        'steps:',
        '  - id: save',
        '    uses: report.write',
        "    with: { path: rows.csv, rows: [{ device: '1', outcome: succeeded }, { device: '2', outcome: failed }] }",
        '  - id: first',
        '    uses: notify.webhook',
        "    with: { url: '${{ secrets.HOOK }}', body: { text: 'Suspended 1 of 2 device(s)', failedByError: { STATE NOT CHANGED: 1 } } }",
        '  - id: second',
        '    uses: notify.webhook',
        "    with: { url: '${{ secrets.HOOK }}', body: { text: done } }",
        '',
      ].join('\n'),
    );
    const file = join(dir, 'tell.test.yaml');
    await writeFile(
      file,
      [
        'cases:',
        '  - name: wrong',
        '    webhooks: { HOOK: {} }',
        '    expect:',
        '      steps:',
        "        save: { contains: [{ device: '3', outcome: failed }] }",
        '      webhooks:',
        '        HOOK: { body: { failedByError: { INVALID DEVICE STATE: 1 } } }',
        '',
      ].join('\n'),
    );
    const r = await run([file]);
    expect(r.lines, r.lines.join('\n')).to.deep.equal([
      `FAIL ${file}: wrong`,
      `    ${file}:6: no row of the report of save matches {"device":"3","outcome":"failed"} (2 rows; the first differs at device: expected "3", got "1")`,
      `    ${file}:8: no request to HOOK has a body matching {"failedByError":{"INVALID DEVICE STATE":1}}: request 1 of 2 differs at failedByError.INVALID DEVICE STATE: expected 1, it has no INVALID DEVICE STATE (it has STATE NOT CHANGED); request 2 at failedByError: expected {"INVALID DEVICE STATE":1}, it has no failedByError (it has text)`,
      '0 passed, 1 failed',
    ]);
  });
});

describe('fleetbook test: the whole place of a mistake in a test file', () => {
  it('names the value by its path from the case, or from the file, not by its last key', async () => {
    const file = await testFile(
      [
        'world: { seed: [1] }',
        'cases:',
        '  - name: a',
        '    before: [{ inputs: 3 }]',
        '    expect:',
        '      calls: { devices.list: -1 }',
        "      deviceStates: { '350260700638360': on }",
        '      steps:',
        '        devices: { calls: -1, status: done, contains: [3] }',
        '',
      ].join('\n'),
    );
    const r = await run([file]);
    expect(r.lines.filter((l) => l.startsWith(`    ${file}:`))).to.deep.equal(
      [
        '2:16: world.seed must be a number or a word, got [1]',
        '5:24: before[0].inputs must be object',
        '7:30: expect.calls.devices.list must be >= 0',
        '8:42: expect.deviceStates.350260700638360 must be one of "pending", "active", "suspend", "deactive"',
        '10:27: expect.steps.devices.calls must be >= 0',
        '10:39: expect.steps.devices.status must be one of "succeeded", "failed", "skipped", "planned", "cancelled", "unreached"',
        '10:56: expect.steps.devices.contains[0] must be object',
      ].map((l) => `    ${file}:${l} [schema]`),
    );
  });
});
