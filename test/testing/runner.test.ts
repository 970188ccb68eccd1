/**
 * The runner of playbook tests (`fleetbook test`) in-process: cases on the embedded emulator, a failed
 * expectation at its own `file:line`, test files checked with "did you mean", and the friendly fault names
 * turned into the emulator's.
 */
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { render } from '../../src/api/schema-files.js';
import { explainingAjv } from '../../src/api/validate.js';
import { eventExample } from '../../src/events/index.js';
import { localRun } from '../../src/daemon/local-event.js';
import { loadPlaybookFile } from '../../src/playbook/load.js';
import type { Playbook } from '../../src/playbook/schema.js';
import { matches } from '../../src/testing/expect.js';
import { findTestFiles, runTests } from '../../src/testing/index.js';
import { testFileSchema } from '../../src/testing/schema.js';
import { emulatorFaults } from '../../src/testing/world.js';
import { playbookFiles } from '../../src/util/files.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'testing');
const at = (name: string) => join(FIXTURES, name);

async function run(files: string[]): Promise<{ lines: string[]; passed: number; failed: number }> {
  const lines: string[] = [];
  const totals = await runTests(files, { write: (l) => lines.push(...l.split('\n')) });
  return { lines, ...totals };
}

describe('fleetbook test: the runner', () => {
  it('passes a case whose expectations hold, and fails one at the line of each expectation that does not', async () => {
    const r = await run([at('manual.test.yaml')]);
    expect(r.lines[0]).to.equal(`ok   ${at('manual.test.yaml')}: lists the devices`);
    expect(r.lines[1]).to.equal(`FAIL ${at('manual.test.yaml')}: expects what did not happen`);
    expect(r.lines.slice(2, 4)).to.deep.equal([
      `    ${at('manual.test.yaml')}:11: expected 2 devices.list request(s), the emulator got 1`,
      `    ${at('manual.test.yaml')}:14: expected step devices failed, got succeeded`,
    ]);
    expect(r.lines.at(-1)).to.equal('1 passed, 1 failed');
    expect([r.passed, r.failed]).to.deep.equal([1, 1]);
  });

  it('refuses a test file with an unknown member at file:line:col, with the closest names', async () => {
    const r = await run([at('typo.test.yaml')]);
    const text = r.lines.join('\n');
    expect(text).to.include(
      `${at('typo.test.yaml')}:5:7: unknown field \`serverErrrors\` (did you mean \`serverErrors\`?) [schema]`,
    );
    expect(text).to.include(
      `${at('typo.test.yaml')}:7:7: unknown field \`stauts\` (did you mean \`status\`?) [schema]`,
    );
    expect(r.lines.at(-1)).to.equal('0 passed, 1 failed');
  });

  it('refuses an expect that checks nothing, however deep its empty maps sit: it could never fail', async () => {
    const file = at('checks-nothing.test.yaml');
    const r = await run([file]);
    expect(r.lines.filter((l) => l.startsWith(`    ${file}:`))).to.deep.equal(
      [
        '6:13: expect checks nothing: give at least one of status, error, devices, steps, calls, deviceCalls, deviceStates, webhooks',
        '8:22: steps checks nothing: give a step id and what the step must do',
        '8:33: calls checks nothing: give an action and its number of requests',
        '8:47: webhooks checks nothing: give a receiver and what it must have got',
        '10:33: the step checks nothing: give at least one of status, error, devices, outcomes, calls, items, output, rows, columns, contains',
        '12:24: devices checks nothing: give at least one of total, accepted, succeeded, failed, skipped, unconfirmed, byError',
        '12:42: deviceStates checks nothing: give a device and its state',
        '12:59: deviceCalls checks nothing: give a device and its changes by action',
        '15:41: the device checks nothing: give an action and its number of changes',
        '16:25: the receiver checks nothing: give at least one of requests, body',
        '17:36: devices checks nothing: give at least one of total, accepted, succeeded, failed, skipped, unconfirmed, byError',
        '17:50: outcomes checks nothing: give a device and its outcome',
      ].map((l) => `    ${file}:${l} [schema]`),
    );
    expect([r.passed, r.failed]).to.deep.equal([0, 1]);
  });

  it('refuses an action or a device state that is none, rather than expect what can never be seen', async () => {
    const r = await run([at('misnamed.test.yaml')]);
    const file = at('misnamed.test.yaml');
    expect(r.lines[0]).to.equal(`FAIL ${file}: does not load`);
    expect(r.lines.filter((l) => l.startsWith(`    ${file}:`))).to.deep.equal([
      `    ${file}:7:9: \`devices.lists\` is not an API action (\`fleetbook actions\` lists them): did you mean \`devices.list\`? [schema]`,
      `    ${file}:9:30: \`devices.suspended\` is not an API action (\`fleetbook actions\` lists them): did you mean \`devices.suspend\`? [schema]`,
      `    ${file}:11:28: expect.deviceStates.350260700638360 must be one of "pending", "active", "suspend", "deactive" (did you mean "suspend"?) [schema]`,
    ]);
    expect([r.passed, r.failed]).to.deep.equal([0, 1]);
  });

  it("refuses a test file of several YAML documents in its own words, not the YAML library's", async () => {
    const file = join(tempDir('fleetbook-test-file-'), 'two.test.yaml');
    await writeFile(file, 'cases: []\n---\ncases: []\n');
    const r = await run([file]);
    expect(r.lines.slice(0, 2)).to.deep.equal([
      `FAIL ${file}: does not load`,
      `    ${file}:2:1: the file holds several YAML documents, the second from here: a playbook test is one document [yaml]`,
    ]);
  });

  it('refuses, at its place, an alias inside its own anchor and a key that is a map or a list', async () => {
    const dir = tempDir('fleetbook-test-file-');
    const cycle = join(dir, 'cycle.test.yaml');
    const key = join(dir, 'key.test.yaml');
    await writeFile(cycle, 'world: &w\n  seed: *w\ncases: []\n');
    await writeFile(key, 'cases:\n  - name: a\n    ? [a, b]\n    : 1\n    expect: { status: succeeded }\n');
    const r = await run([cycle, key]);
    expect(r.lines.filter((l) => l.startsWith('    /'))).to.deep.equal([
      `    ${cycle}:2:9: alias *w is inside the node its anchor names: the data would never end [yaml]`,
      `    ${key}:3:7: a key is a name, not a map or a list: write it as plain text [yaml]`,
    ]);
    expect([r.passed, r.failed]).to.deep.equal([0, 2]);
  });

  it('says an empty test file is empty, and what a test file holds (not `input must be object`)', async () => {
    const dir = tempDir('fleetbook-test-file-');
    const empty = join(dir, 'empty.test.yaml');
    const list = join(dir, 'list.test.yaml');
    await writeFile(empty, '');
    await writeFile(list, '- name: a\n');
    const r = await run([empty, list]);
    const holds =
      'a playbook test is a mapping of `cases` (at least one, each with a `name` and an `expect`), and may give `playbook`, `world` and `faults` [yaml]';
    expect(r.lines.filter((l) => l.startsWith('    /'))).to.deep.equal([
      `    ${empty}:1:1: the file is empty: ${holds}`,
      `    ${list}:1:1: the file is not a YAML mapping: ${holds}`,
    ]);
    expect([r.passed, r.failed]).to.deep.equal([0, 2]);
  });

  it('refuses a case timeout of zero (the run would be cancelled at once) or past a timer, as playbooks do', async () => {
    const file = join(tempDir('fleetbook-test-file-'), 'timeouts.test.yaml');
    const cases = ['0s', '30d', '1m'].map(
      (t) => `  - name: ${t}\n    timeout: ${t}\n    expect: { status: succeeded }\n`,
    );
    await writeFile(file, `cases:\n${cases.join('')}`);
    const r = await run([file]);
    expect(r.lines.filter((l) => l.startsWith(`    ${file}:`))).to.deep.equal([
      `    ${file}:3:14: timeout is zero: the run would be cancelled at once; give a duration above zero [duration]`,
      `    ${file}:6:14: timeout 30d is longer than 24d, the most a duration may be (a timer, such as a step's timeout, cannot wait longer than 24.8 days) [duration]`,
    ]);
  });

  it("refuses a world or a fault the emulator would refuse, at its place, by the test file's name", async () => {
    const dir = tempDir('fleetbook-test-file-');
    await writeFile(join(dir, 'manual.yaml'), await readFile(at('manual.yaml'), 'utf8'));
    const file = join(dir, 'manual.test.yaml');
    await writeFile(
      file,
      [
        'world: { accounts: 1001, timeScale: 2000000, seed: " " }',
        'faults: { carrierDelay: 366d, sessionExpiry: 0s, rateLimit: 1000001 }',
        'cases:',
        '  - name: a',
        '    world: { accounts: 1000, devicesPerAccount: 5001 }',
        '    faults: { sessionExpiry: 400d, latency: 25d, deviceErrors: { ABSENT SUBSCRIBER: 0.6, SYSTEM FAILURE: 0.5 } }',
        '    before:',
        '      - faults: { carrierDelay: 1000d, deviceErrors: { ABSENT SUBSCRIBR: 0.1 } }',
        '    expect: { status: succeeded }',
        '',
      ].join('\n'),
    );
    const r = await run([file]);
    expect(r.lines[0]).to.equal(`FAIL ${file}: does not load`);
    expect(r.lines.filter((l) => l.startsWith(`    ${file}:`))).to.deep.equal([
      `    ${file}:1:20: world.accounts must be an integer from 1 to 1000, got 1001 [schema]`,
      `    ${file}:1:37: world.timeScale must be a number from 0 to 1000000 (e.g. 60 or 0.5), got 2000000 [schema]`,
      `    ${file}:1:52: world.seed is empty: give a number or a word, or leave it out [schema]`,
      `    ${file}:2:25: faults.carrierDelay 366d is longer than a year (365d) of simulated time [duration]`,
      `    ${file}:2:46: faults.sessionExpiry is zero: a session would expire at once; give a duration above zero [duration]`,
      `    ${file}:2:61: faults.rateLimit must be an integer from 0 to 1000000 (0: no limit), got 1000001 [schema]`,
      `    ${file}:5:12: world.accounts × world.devicesPerAccount must be at most 5000000 devices, got 5001000 [schema]`,
      `    ${file}:6:30: faults.sessionExpiry 400d is longer than a year (365d) of simulated time [duration]`,
      `    ${file}:6:45: faults.latency 25d is longer than 24d, the most a duration may be (a timer, such as a step's timeout, cannot wait longer than 24.8 days) [duration]`,
      `    ${file}:6:64: faults.deviceErrors: the rates add up to 1.1, more than 1 [schema]`,
      `    ${file}:8:33: faults.carrierDelay 1000d is longer than a year (365d) of simulated time [duration]`,
      `    ${file}:8:56: \`ABSENT SUBSCRIBR\` is not a per-device error type of spec section 7.3: did you mean \`ABSENT SUBSCRIBER\`? [schema]`,
    ]);
  });

  it('names a share or a count out of its range by its place in the file, as the emulator words it', async () => {
    const dir = tempDir('fleetbook-test-file-');
    await writeFile(join(dir, 'manual.yaml'), await readFile(at('manual.yaml'), 'utf8'));
    const file = join(dir, 'manual.test.yaml');
    await writeFile(
      file,
      [
        'world: { accounts: 0 }',
        'faults: { serverErrors: 1.5, connectionResets: -1, rateLimit: -1 }',
        'cases:',
        '  - name: a',
        '    faults: { neverFinish: 2, deviceErrors: { ABSENT SUBSCRIBER: 1.5 } }',
        '    expect: { status: succeeded }',
        '',
      ].join('\n'),
    );
    const r = await run([file]);
    expect(r.lines.filter((l) => l.startsWith(`    ${file}:`))).to.deep.equal([
      `    ${file}:1:20: world.accounts must be an integer from 1 to 1000, got 0 [schema]`,
      `    ${file}:2:25: faults.serverErrors must be a number from 0 to 1, got 1.5 [schema]`,
      `    ${file}:2:48: faults.connectionResets must be a number from 0 to 1, got -1 [schema]`,
      `    ${file}:2:63: faults.rateLimit must be an integer from 0 to 1000000 (0: no limit), got -1 [schema]`,
      `    ${file}:5:28: faults.neverFinish must be a number from 0 to 1, got 2 [schema]`,
      `    ${file}:5:45: faults.deviceErrors: the rates add up to 1.5, more than 1 [schema]`,
      `    ${file}:5:66: faults.deviceErrors: the rate of ABSENT SUBSCRIBER must be a number from 0 to 1, got 1.5 [schema]`,
    ]);
  });

  it('starts no run the daemon would not start: inputs for a callback playbook, an event off its schema', async () => {
    const r = await run([at('refused.test.yaml')]);
    expect(r.lines.at(-1), r.lines.join('\n')).to.equal('2 passed, 0 failed');
  });

  it('finds NAME.test.yaml files under a directory, and only them', async () => {
    expect(await findTestFiles([FIXTURES])).to.deep.equal(
      [
        'checks-nothing.test.yaml',
        'manual.test.yaml',
        'misnamed.test.yaml',
        'refused.test.yaml',
        'typo.test.yaml',
      ].map(at),
    );
  });

  it('leaves the tests out of the playbooks of a directory (validate, serve, fmt)', async () => {
    expect(await playbookFiles(FIXTURES)).to.deep.equal([at('manual.yaml')]);
  });

  it('gives the emulator its faults from their names in a test file', () => {
    expect(
      emulatorFaults({
        serverErrors: 0.1,
        connectionResets: 0.2,
        latency: '250ms',
        rateLimit: 5,
        sessionExpiry: '2m',
        deviceErrors: { 'ABSENT SUBSCRIBER': 0.5 },
        carrierDelay: '30s',
        neverFinish: 0.3,
        neverFinishDevices: ['350260700638360'],
        droppedCallbacks: 0.4,
      }),
    ).to.deep.equal({
      errorRate: 0.1,
      resetRate: 0.2,
      latencyMs: 250,
      maxRequestsPerSecond: 5,
      sessionTtlSeconds: 120,
      deviceErrors: { 'ABSENT SUBSCRIBER': 0.5 },
      processingSeconds: 30,
      neverFinishRate: 0.3,
      neverFinishDevices: ['350260700638360'],
      dropCallbackRate: 0.4,
    });
  });

  it('matches objects by their members, lists item by item, and /patterns/ as regular expressions', () => {
    expect(matches({ a: 1 }, { a: 1, b: 2 })).to.equal(true);
    expect(matches({ a: 1, c: 3 }, { a: 1, b: 2 })).to.equal(false);
    expect(matches({ text: '/^Suspended 2 of/' }, { text: 'Suspended 2 of 2' })).to.equal(true);
    expect(matches({ text: '/^Suspended 2 of/' }, { text: 'Suspended 1 of 2' })).to.equal(false);
    expect(matches({ rows: 3 }, { rows: '3' })).to.equal(true);
    expect(matches([1, 2], [1, 2, 3])).to.equal(false);
  });
});

describe('fleetbook test: nothing leaves the machine', () => {
  /** A manual playbook that pages `url` (an expression or a literal), in a new directory with `test`. */
  async function files(url: string, test: string): Promise<string> {
    const dir = tempDir('fleetbook-test-hermetic-');
    await writeFile(
      join(dir, 'page.yaml'),
      [
        'version: 1',
        'name: page',
        'on: { manual: true }',
        'steps:',
        '  - id: page',
        '    uses: notify.webhook',
        `    with: { url: '${url}', body: { text: hello } }`,
        '',
      ].join('\n'),
    );
    const file = join(dir, 'page.test.yaml');
    await writeFile(file, test);
    return file;
  }

  it('refuses a webhook to anything but the case receivers, before any lookup or connection', async () => {
    // A name that resolves nowhere: a webhook that went out would fail for DNS, not be refused.
    const file = await files(
      'https://oncall.fleetbook-test.invalid/hook',
      'cases:\n  - name: pages\n    expect: { status: succeeded }\n',
    );
    const r = await run([file]);
    expect(r.lines[0]).to.equal(`FAIL ${file}: pages`);
    expect(r.lines[1]).to.equal(
      `    ${file}:3: expected status succeeded, got failed (step \`page\` failed: notify.webhook: a playbook test sends webhooks only to its case's receivers (\`webhooks\`), not to https://oncall.fleetbook-test.invalid: give the URL as a secret (\`url: \${{ secrets.ONCALL }}\`) and the case a receiver of that name (\`webhooks: { ONCALL: {} }\`))`,
    );
  });

  it("sends to a case's receiver, named by the secret the playbook reads", async () => {
    const file = await files(
      '${{ secrets.ONCALL }}',
      'cases:\n  - name: pages\n    webhooks: { ONCALL: {} }\n    expect: { status: succeeded, webhooks: { ONCALL: { requests: 1 } } }\n',
    );
    const r = await run([file]);
    expect(r.lines).to.deep.equal([`ok   ${file}: pages`, '1 passed, 0 failed']);
  });

  it('refuses a receiver or a secret no playbook of the case names: it would be silently unused', async () => {
    const file = await files(
      '${{ secrets.ONCALL }}',
      [
        'cases:',
        '  - name: misnamed',
        '    secrets: { ONCALL: https://example.com, TOKEN: x }',
        '    webhooks: { ONCAL: {} }',
        '    expect: { status: succeeded }',
        '',
      ].join('\n'),
    );
    const r = await run([file]);
    expect(r.lines[0]).to.equal(`FAIL ${file}: misnamed`);
    expect(r.lines.filter((l) => l.startsWith(`    ${file}:`))).to.deep.equal([
      `    ${file}:3:45: secret \`TOKEN\` is read by no playbook of the case, so it changes nothing: the playbook reads \`ONCALL\` [schema]`,
      `    ${file}:4:17: receiver \`ONCAL\` would get nothing: no playbook of the case reads \`secrets.ONCAL\` (did you mean \`ONCALL\`?); a receiver is given to the playbook as the secret of its name [schema]`,
    ]);
    expect([r.passed, r.failed]).to.deep.equal([0, 1]);
  });

  it('does not judge the names of a case whose playbook chooses its secret at run time', async () => {
    const file = await files(
      '${{ secrets["ON" + "CALL"] }}',
      'cases:\n  - name: pages\n    secrets: { SPARE: x }\n    webhooks: { ONCALL: {} }\n    expect: { webhooks: { ONCALL: { requests: 1 } } }\n',
    );
    const r = await run([file]);
    expect(r.lines).to.deep.equal([`ok   ${file}: pages`, '1 passed, 0 failed']);
  });
});

describe('fleetbook test: a required input the case does not give', () => {
  it("says to give it under the case's inputs", async () => {
    const dir = tempDir('fleetbook-test-inputs-');
    await writeFile(
      join(dir, 'needs.yaml'),
      [
        'version: 1',
        'name: needs',
        'on: { manual: true }',
        'inputs:',
        '  imeis: { type: array, required: true }',
        '  reason: { type: string, required: true }',
        'steps:',
        '  - { id: say, uses: log, with: { message: "${{ inputs.reason }}" } }',
        '',
      ].join('\n'),
    );
    const file = join(dir, 'needs.test.yaml');
    await writeFile(file, 'cases:\n  - name: forgets them\n    expect: { status: succeeded }\n');
    const r = await run([file]);
    expect(r.lines[1]).to.equal(
      `    ${file}:3: expected status succeeded, got no run: inputs \`imeis\` (array), \`reason\` (string) are required: give them under the case's \`inputs:\`, e.g. \`inputs: { imeis: [...], reason: ... }\``,
    );
  });
});

describe('a callback event given by hand', () => {
  let pb: Playbook;
  before(async () => {
    pb = (
      await loadPlaybookFile(join(import.meta.dirname, '..', '..', 'playbooks', 'suspend-on-overuse.yaml'))
    ).playbook as Playbook;
  });

  it('reaches the run as the daemon gives it: without the credentials and the delivery counters', () => {
    const example = eventExample('DeviceUsage');
    const posted = { ...example, username: 'u', password: 'p', callbackCount: 1, maxCallbackThreshold: 4 };
    const run = localRun(pb, { event: posted });
    expect(run).to.deep.equal({
      trigger: {
        type: 'callback',
        service: 'DeviceUsage',
        kind: 'alertServiceResponse',
        requestId: example.requestId,
      },
      event: example,
      inputs: {},
    });
  });

  it('is refused when on.callback.if does not select it, saying so', () => {
    const example = eventExample('DeviceUsage') as {
      deviceResponse: { alertServiceResponse: { triggerName: string } };
    };
    example.deviceResponse.alertServiceResponse.triggerName = 'upgrade-monthly';
    expect(localRun(pb, { event: example })).to.deep.equal({
      refused:
        'on.callback (DeviceUsage) does not select this DeviceUsage event: the daemon would start no run of suspend-on-overuse for it',
    });
  });

  it('is needed by a playbook without on.manual, which says what to add', () => {
    const run = localRun(pb, { inputs: {} });
    expect(run).to.have.property('refused').that.includes('--event FILE').and.includes('manual: true');
  });
});

describe('schemas/playbook-test.schema.json', () => {
  it('is up to date (run `npm run schemas` when this fails), compiles, and takes the shipped tests', async () => {
    const root = join(import.meta.dirname, '..', '..');
    const schema = testFileSchema();
    expect(await readFile(join(root, 'schemas', 'playbook-test.schema.json'), 'utf8')).to.equal(
      render(schema),
    );
    const { $id: _id, ...rest } = schema;
    const validate = explainingAjv().compile(rest);
    const tests = (await readdir(join(root, 'playbooks'))).filter((f) => f.endsWith('.test.yaml'));
    expect(tests.length).to.be.greaterThan(0);
    for (const f of tests)
      expect(validate(parse(await readFile(join(root, 'playbooks', f), 'utf8'))), f).to.equal(true);
    expect(validate({ cases: [{ name: 'x', expect: { stauts: 'succeeded' } }] })).to.equal(false);
  });
});
