/**
 * `fleetbook test` with earlier runs (`before`): a playbook that reads the ledger of earlier runs
 * (ledger.query) is tested against the runs of the shipped nightly location report made first in the same case,
 * on the same emulator and store; an earlier run that fails fails the case, saying which; a mistake in `before`
 * is told at file:line:col.
 */
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** Each morning, the devices last night's report could not locate, asked again (cached or current). */
const RETRY = `version: 1
name: retry-location-misses
on: { manual: true }
inputs:
  account: { type: string, default: '0000123456-00001' }
steps:
  - id: missed
    uses: ledger.query
    with:
      playbook: nightly-location-report
      step: report
      error: [SVC CACHE UNAVAILABLE, ABSENT SUBSCRIBER]
  - id: again
    if: '\${{ steps.missed.output.count > 0 }}'
    uses: location.createReport
    with:
      accountName: '\${{ inputs.account }}'
      deviceList: '\${{ steps.missed.items }}'
      accuracyMode: '0'
      cacheMode: '1'
    wait: { for: completion, timeout: 2h }
`;

async function suite(
  prefix: string,
): Promise<{ dir: string; write: (name: string, text: string) => Promise<void> }> {
  const dir = tempDir(prefix);
  await copyFile(
    join(ROOT, 'playbooks', 'nightly-location-report.yaml'),
    join(dir, 'nightly-location-report.yaml'),
  );
  await writeFile(join(dir, 'retry-location-misses.yaml'), RETRY);
  return { dir, write: (name, text) => writeFile(join(dir, name), text) };
}

describe('fleetbook test: earlier runs (before)', () => {
  it("runs the earlier runs first, on the same emulator and store: the case's run queries their ledger", async function () {
    this.timeout(120_000);
    const { dir, write } = await suite('fleetbook-test-before-');
    await write(
      'retry-location-misses.test.yaml',
      `cases:
  - name: locates again the devices last night's report could not reach
    before:
      # Last night: a fifth of the devices off the network; this morning, none.
      - playbook: nightly-location-report.yaml
        faults:
          deviceErrors: { ABSENT SUBSCRIBER: 0.2 }
    expect:
      status: succeeded
      steps:
        again:
          status: succeeded
          devices: { total: 13, succeeded: 13, failed: 0 }
      # The case's own run only: the nightly report listed the devices and made its report.
      calls:
        devices.list: 0
        location.createReport: 1

  - name: the cache misses the nightly report asked again itself are not asked a third time
    before:
      - playbook: nightly-location-report.yaml
        faults:
          deviceErrors: { SVC CACHE UNAVAILABLE: 0.5 }
    expect:
      status: succeeded
      steps:
        again: { status: skipped }
      calls:
        location.createReport: 0

  - name: two nights, the query reads the last
    before:
      - playbook: nightly-location-report.yaml
        faults: { deviceErrors: { ABSENT SUBSCRIBER: 0.2 } }
      - playbook: nightly-location-report.yaml
        inputs: { account: '0000123456-00001' }
    expect:
      steps:
        again: { status: skipped }

  - name: without an earlier run there is nothing to retry
    expect:
      steps:
        again: { status: skipped }
      calls:
        location.createReport: 0
`,
    );
    const r = await fleetbook(['test', 'retry-location-misses.test.yaml'], {}, [], dir, 110_000);
    expect([r.code, r.stderr, r.stdout]).to.deep.equal([
      0,
      '',
      [
        "ok   retry-location-misses.test.yaml: locates again the devices last night's report could not reach",
        'ok   retry-location-misses.test.yaml: the cache misses the nightly report asked again itself are not asked a third time',
        'ok   retry-location-misses.test.yaml: two nights, the query reads the last',
        'ok   retry-location-misses.test.yaml: without an earlier run there is nothing to retry',
        '4 passed, 0 failed',
        '',
      ].join('\n'),
    ]);
  });

  it("runs an event, of the case's own playbook by default; calls and webhooks are those of the case's run", async function () {
    this.timeout(60_000);
    const dir = tempDir('fleetbook-test-before-event-');
    await copyFile(join(ROOT, 'playbooks', 'suspend-on-overuse.yaml'), join(dir, 'suspend-on-overuse.yaml'));
    const event = (n: number, imei: string) => `
      requestId: 7d0f6a52-1c1e-4a43-9c55-2f7b0c1d9e0${n}
      deviceResponse:
        alertServiceResponse:
          triggerId: 1c6d0b6a-3f6e-4d2b-9a5c-7e8f9a0b1c2d
          triggerName: overuse-daily-5gb
          triggerCategory: PricePlanDataUsage
          accountName: '0000123456-00001'
          payAsYouGo:
            carrierServicePlanCode: '84799'
            servicePlanDescription: IoT 25MB
            deviceIds: [{ id: '${imei}', kind: IMEI }]
            triggerDateTime: '2026-01-05T14:07:31.000Z'
            triggerValue: 5
            cycleType: DAILY
            threshold: 5
            thresholdUnit: GB
            message: Device passed 5 GB today`;
    await writeFile(
      join(dir, 'suspend-on-overuse.test.yaml'),
      `cases:
  - name: a device suspended by an earlier alert stays suspended
    before:
      - event:${event(1, '350260700638360').replace(/\n {6}/g, '\n          ')}
    event:${event(2, '350260700638378')}
    webhooks:
      ONCALL_WEBHOOK: {}
    expect:
      status: succeeded
      calls:
        devices.suspend: 1
      deviceCalls:
        '350260700638360': { devices.suspend: 0 }
        '350260700638378': { devices.suspend: 1 }
      deviceStates:
        '350260700638360': suspend
        '350260700638378': suspend
      webhooks:
        ONCALL_WEBHOOK:
          requests: 1
          body: { text: '/^Suspended 1 of 1 device/' }
`,
    );
    const r = await fleetbook(['test', 'suspend-on-overuse.test.yaml'], {}, [], dir, 55_000);
    expect([r.code, r.stderr, r.stdout]).to.deep.equal([
      0,
      '',
      'ok   suspend-on-overuse.test.yaml: a device suspended by an earlier alert stays suspended\n1 passed, 0 failed\n',
    ]);
  });

  it('fails a case whose earlier run fails or does not start, saying which and why', async function () {
    this.timeout(60_000);
    const { dir, write } = await suite('fleetbook-test-before-fails-');
    await write(
      'retry-location-misses.test.yaml',
      `cases:
  - name: last night's report failed
    before:
      - playbook: nightly-location-report.yaml
      - playbook: nightly-location-report.yaml
        inputs: { account: '0000999999-00001' }
    expect:
      status: succeeded

  - name: last night's report did not start
    before:
      - playbook: nightly-location-report.yaml
        inputs: { acount: '0000123456-00002' }
    expect:
      status: succeeded
`,
    );
    const r = await fleetbook(['test', 'retry-location-misses.test.yaml'], {}, [], dir, 55_000);
    expect([r.code, r.stderr]).to.deep.equal([1, '']);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).to.equal("FAIL retry-location-misses.test.yaml: last night's report failed");
    expect(lines[1]).to.match(
      /^ {4}retry-location-misses\.test\.yaml:5: earlier run 2 \(nightly-location-report\.yaml\) failed: .*devices/,
    );
    expect(lines.slice(2)).to.deep.equal([
      "FAIL retry-location-misses.test.yaml: last night's report did not start",
      '    retry-location-misses.test.yaml:12: earlier run 1 (nightly-location-report.yaml) did not start: unknown input `acount` (declared: account)',
      '0 passed, 2 failed',
    ]);
  });

  it('tells a mistake in before at file:line:col: a playbook not there, an event and inputs, an unknown key', async () => {
    const { dir, write } = await suite('fleetbook-test-before-mistakes-');
    const expectation = '    expect: { status: succeeded }\n';
    const test = (before: string) =>
      `playbook: retry-location-misses.yaml\ncases:\n  - name: a\n    before:\n${before}${expectation}`;
    await write('a-missing.test.yaml', test('      - playbook: nightly.yaml\n'));
    await write(
      'b-both.test.yaml',
      test('      - playbook: nightly-location-report.yaml\n        event: {}\n        inputs: {}\n'),
    );
    await write(
      'c-key.test.yaml',
      test('      - playbook: nightly-location-report.yaml\n        fautls: { latency: 1s }\n'),
    );
    await write(
      'd-invalid.yaml',
      'version: 1\nname: d\non: { manual: true }\nsteps:\n  - id: s\n    uses: devices.lst\n',
    );
    await write('d-invalid.test.yaml', test('      - playbook: d-invalid.yaml\n'));
    const r = await fleetbook(['test', '.'], {}, [], dir);
    expect([r.code, r.stderr]).to.deep.equal([1, '']);
    const at = (name: string, where: string, message: string, line: string, caret: number) =>
      [
        `FAIL ${name}: does not load`,
        `    ${name}:${where}: ${message}`,
        `       ${where.split(':')[0]} | ${line}`,
        `         | ${' '.repeat(caret)}^`,
      ].join('\n');
    const [files, invalid = ''] = r.stdout.split('FAIL d-invalid.test.yaml: does not load\n');
    expect(files).to.equal(
      [
        at(
          'a-missing.test.yaml',
          '5:19',
          'the playbook nightly.yaml cannot be read: no such file or directory [schema]',
          '      - playbook: nightly.yaml',
          18,
        ),
        at(
          'b-both.test.yaml',
          '7:9',
          'an earlier run gives an event or inputs, not both [schema]',
          '        inputs: {}',
          8,
        ),
        at(
          'c-key.test.yaml',
          '6:9',
          'unknown field `fautls` (did you mean `faults`?) [schema]',
          '        fautls: { latency: 1s }',
          8,
        ),
        '',
      ].join('\n'),
    );
    // The earlier run's playbook is checked as the case's is: its errors, at its own file:line:col.
    expect(invalid).to.match(/^ {4}d-invalid\.yaml:6:11: .*devices\.lst/);
    expect(invalid.trimEnd().split('\n').at(-1)).to.equal('0 passed, 4 failed');
  });
});
