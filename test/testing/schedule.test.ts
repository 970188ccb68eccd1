/**
 * A case started as the schedule starts its playbook (`schedule: true`, `schedule: { at }`): a schedule-only
 * playbook is tested without `manual: true`, its run gets the daemon's trigger from the function the daemon's
 * scheduler uses, and the run (and the emulator) run at the scheduled time. Real emulator, in-process.
 */
import { writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { expect } from 'chai';
import { scheduledRun, schedulesOf } from '../../src/daemon/scheduler.js';
import { loadPlaybookFile } from '../../src/playbook/load.js';
import { compileCron, type CronSchedule } from '../../src/playbook/cron.js';
import type { Playbook } from '../../src/playbook/schema.js';
import { runTests } from '../../src/testing/index.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOKS = join(import.meta.dirname, '..', '..', 'playbooks');

async function run(files: string[]): Promise<{ lines: string[]; passed: number; failed: number }> {
  const lines: string[] = [];
  const totals = await runTests(files, { write: (l) => lines.push(...l.split('\n')) });
  return { lines, ...totals };
}

/** A playbook that tells its run's date and start to a receiver: scheduled only, unless `on` says more. */
const NIGHTLY = (on = "schedule: { cron: '0 2 * * *', timezone: America/New_York }") =>
  [
    'version: 1',
    'name: nightly',
    'on:',
    `  ${on}`,
    'inputs:',
    "  account: { type: string, default: '0000123456-00001' }",
    'steps:',
    '  - id: devices',
    '    uses: devices.list',
    '    with: { accountName: "${{ inputs.account }}", currentState: active }',
    '  - id: tell',
    '    uses: notify.webhook',
    '    with:',
    '      url: ${{ secrets.HOOK }}',
    '      body: { date: "${{ run.date }}", startedAt: "${{ run.startedAt }}", scheduledAt: "${{ run.scheduledAt }}", account: "${{ inputs.account }}" }',
    '',
  ].join('\n');

/** `nightly.yaml` (NIGHTLY(on)) and `nightly.test.yaml` (`test`) in a new directory; the test file's path. */
async function files(test: string, on?: string): Promise<string> {
  const dir = tempDir('fleetbook-test-schedule-');
  await writeFile(join(dir, 'nightly.yaml'), NIGHTLY(on));
  const file = join(dir, 'nightly.test.yaml');
  await writeFile(file, test);
  return file;
}

describe('fleetbook test: a case started by the schedule', () => {
  it('runs a schedule-only playbook as its schedule does: no manual: true, the inputs’ defaults', async () => {
    // Without `at`, the run is the schedule's next fire: its date and start are that occurrence's.
    const schedule = (compileCron('0 2 * * *', 'America/New_York') as { schedule: CronSchedule }).schedule;
    const next = new Date(schedule.next(Date.now()) as number).toISOString();
    const file = await files(
      [
        'cases:',
        '  - name: tonight',
        '    schedule: true',
        '    webhooks: { HOOK: {} }',
        '    expect:',
        '      status: succeeded',
        '      calls: { devices.list: 1 }',
        '      webhooks:',
        `        HOOK: { requests: 1, body: { date: '${next.slice(0, 10)}', startedAt: '${next}', account: '0000123456-00001' } }`,
        '',
      ].join('\n'),
    );
    const r = await run([file]);
    expect(r.lines, r.lines.join('\n')).to.deep.equal([`ok   ${file}: tonight`, '1 passed, 0 failed']);
  });

  it('starts the run at the time `at` gives: run.startedAt, run.scheduledAt and run.date are that time’s', async () => {
    const file = await files(
      [
        'cases:',
        '  - name: the night of November 30th',
        "    schedule: { at: '2026-11-30T02:00:00-05:00' }",
        '    webhooks: { HOOK: {} }',
        '    expect:',
        '      webhooks:',
        "        HOOK: { body: { date: '2026-11-30', startedAt: '2026-11-30T07:00:00.000Z', scheduledAt: '2026-11-30T07:00:00.000Z' } }",
        '  - name: a night after the clocks change',
        "    schedule: { at: '2026-07-01T02:00:00-04:00' }",
        '    webhooks: { HOOK: {} }',
        '    expect:',
        '      webhooks:',
        "        HOOK: { body: { date: '2026-07-01', startedAt: '2026-07-01T06:00:00.000Z', scheduledAt: '2026-07-01T06:00:00.000Z' } }",
        '',
      ].join('\n'),
    );
    const r = await run([file]);
    expect(r.lines.at(-1), r.lines.join('\n')).to.equal('2 passed, 0 failed');
  });

  it('starts the emulator at the scheduled time: the service’s clock is the run’s, as in production', async () => {
    // The nightly report's locations are fixes the emulator made at its own time, from its cache: up to three
    // hours old. The emulator's default start is 2026-01-05.
    const dir = tempDir('fleetbook-test-schedule-');
    const file = join(dir, 'report.test.yaml');
    await writeFile(
      file,
      [
        `playbook: ${relative(dir, join(PLAYBOOKS, 'nightly-location-report.yaml'))}`,
        'cases:',
        '  - name: the report of the night of November 30th',
        "    schedule: { at: '2026-11-30T02:00:00-05:00' }",
        '    expect:',
        '      steps:',
        "        save: { contains: [{ outcome: succeeded, time: '/^2026-11-30T0[4-7]:/' }] }",
        '',
      ].join('\n'),
    );
    const r = await run([file]);
    expect(r.lines.at(-1), r.lines.join('\n')).to.equal('1 passed, 0 failed');
  });

  it('runs earlier runs at their own scheduled times, before the case’s run, on one clock', async () => {
    // The report's ledger is found by `since: 5h` at 06:00 only if the report ran at 02:00 of the same night.
    const dir = tempDir('fleetbook-test-schedule-');
    await writeFile(
      join(dir, 'morning.yaml'),
      [
        'version: 1',
        'name: morning',
        "on: { schedule: { cron: '0 6 * * *', timezone: America/New_York } }",
        'steps:',
        '  - id: last',
        '    uses: ledger.query',
        '    with: { playbook: nightly-location-report, step: report, since: 5h }',
        '  - id: tell',
        '    uses: notify.webhook',
        '    with: { url: "${{ secrets.HOOK }}", body: { found: "${{ steps.last.output.count > 0 }}" } }',
        '',
      ].join('\n'),
    );
    const file = join(dir, 'morning.test.yaml');
    const report = relative(dir, join(PLAYBOOKS, 'nightly-location-report.yaml'));
    await writeFile(
      file,
      [
        'cases:',
        '  - name: the same night',
        '    before:',
        `      - { playbook: ${report}, schedule: { at: '2026-11-30T02:00:00-05:00' } }`,
        "    schedule: { at: '2026-11-30T06:00:00-05:00' }",
        '    webhooks: { HOOK: {} }',
        "    expect: { webhooks: { HOOK: { body: { found: 'true' } } } }",
        '  - name: the night before',
        '    before:',
        `      - { playbook: ${report}, schedule: { at: '2026-11-29T02:00:00-05:00' } }`,
        "    schedule: { at: '2026-11-30T06:00:00-05:00' }",
        '    webhooks: { HOOK: {} }',
        "    expect: { webhooks: { HOOK: { body: { found: 'false' } } } }",
        '',
      ].join('\n'),
    );
    const r = await run([file]);
    expect(r.lines.at(-1), r.lines.join('\n')).to.equal('2 passed, 0 failed');
  });

  it('refuses, at file:line:col, a schedule with an event or inputs, and times out of order', async () => {
    const file = await files(
      [
        'cases:',
        '  - name: an event too',
        '    schedule: true',
        '    event: { x: 1 }',
        '    expect: { status: succeeded }',
        '  - name: inputs too',
        '    schedule: true',
        "    inputs: { account: '0000123456-00002' }",
        '    expect: { status: succeeded }',
        '  - name: no such day',
        '    before:',
        "      - { schedule: { at: '2026-02-30T02:00:00-05:00' }, event: {} }",
        "    schedule: { at: '2026-11-30T02:00:00' }",
        '    expect: { status: succeeded }',
        '  - name: back in time',
        '    before:',
        "      - schedule: { at: '2026-12-01T02:00:00-05:00' }",
        "    schedule: { at: '2026-11-30T02:00:00-05:00' }",
        '    expect: { status: succeeded }',
        '',
      ].join('\n'),
    );
    const r = await run([file]);
    expect(r.lines.filter((l) => l.startsWith(`    ${file}:`))).to.deep.equal(
      [
        '4:5: a case gives an event or a schedule, not both: a scheduled run has no event',
        '8:5: a scheduled run has no inputs of its own (it gets their defaults): give `schedule` or `inputs`, not both',
        '12:27: schedule.at 2026-02-30T02:00:00-05:00 is no time: that day or hour does not exist',
        '12:58: an earlier run gives an event or a schedule, not both: a scheduled run has no event',
        '13:21: schedule.at "2026-11-30T02:00:00" is not valid: A date and time with its offset (2026-11-30T02:00:00-05:00, 2026-11-30T07:00:00Z): the fire that starts the run. The run (run.startedAt, run.date) and the emulator start at that time.',
        '18:21: the case runs at 2026-11-30T02:00:00-05:00, before earlier run 1 (2026-12-01T02:00:00-05:00): the runs of a case are in the order of their times',
      ].map((l) => `    ${file}:${l} [schema]`),
    );
    expect([r.passed, r.failed]).to.deep.equal([0, 1]);
  });

  it('makes a dry run of the fire: its time, no mutating call, the devices it would have acted on', async () => {
    // What tonight's run would do, without doing it: the read-only calls made at the fire's time, the
    // suspension planned, each device it would have suspended among the step's items.
    const dir = tempDir('fleetbook-test-schedule-');
    await writeFile(
      join(dir, 'nightly-suspend.yaml'),
      [
        'version: 1',
        'name: nightly-suspend',
        "on: { schedule: { cron: '0 2 * * *', timezone: America/New_York } }",
        'steps:',
        '  - id: active',
        '    uses: devices.list',
        "    with: { accountName: '0000123456-00001', currentState: active }",
        '  - id: suspend',
        '    uses: devices.suspend',
        "    with: { accountName: '0000123456-00001', devices: '${{ steps.active.items }}' }",
        '  - id: say',
        '    uses: log',
        "    with: { message: '${{ run.date }} ${{ run.scheduledAt }} ${{ run.dryRun }} ${{ steps.suspend.devices.skipped }}' }",
        '',
      ].join('\n'),
    );
    const file = join(dir, 'nightly-suspend.test.yaml');
    await writeFile(
      file,
      [
        'cases:',
        '  - name: the night of November 30th, planned',
        "    schedule: { at: '2026-11-30T02:00:00-05:00' }",
        '    dryRun: true',
        '    expect:',
        '      status: succeeded',
        '      calls: { devices.list: 1, devices.suspend: 0 }',
        '      deviceStates: { 350260700638360: active }',
        '      steps:',
        '        suspend: { status: planned }',
        "        say: { output: { message: '/^2026-11-30 2026-11-30T07:00:00.000Z true [1-9][0-9]*$/' } }",
        '',
      ].join('\n'),
    );
    const r = await run([file]);
    expect(r.lines, r.lines.join('\n')).to.deep.equal([
      `ok   ${file}: the night of November 30th, planned`,
      '1 passed, 0 failed',
    ]);
  });

  it('refuses, at file:line:col, a time the schedule never fires at, and a playbook without on.schedule', async () => {
    const file = await files(
      [
        'cases:',
        '  - name: half past',
        "    schedule: { at: '2026-11-30T02:30:00-05:00' }",
        '    expect: { status: succeeded }',
        '  - name: the manual one first',
        '    before:',
        '      - { playbook: manual.yaml, schedule: true }',
        '    schedule: true',
        '    expect: { status: succeeded }',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(dirname(file), 'manual.yaml'),
      NIGHTLY('manual: true').replace('name: nightly', 'name: by-hand'),
    );
    const r = await run([file]);
    expect(r.lines.filter((l) => !l.startsWith('      '))).to.deep.equal([
      `FAIL ${file}: half past`,
      `    ${file}:3:21: the schedule of nightly (0 2 * * * in America/New_York) does not fire at 2026-11-30T02:30:00-05:00: it fires at 2026-11-30T07:00:00.000Z and next at 2026-12-01T07:00:00.000Z [schema]`,
      `FAIL ${file}: the manual one first`,
      `    ${file}:7:34: playbook by-hand has no on.schedule: no schedule starts it (give it inputs, or nothing for the inputs' defaults) [schema]`,
      '0 passed, 2 failed',
    ]);
  });

  it('names the last fire of a yearly schedule, months before the time given', async () => {
    const file = await files(
      "cases:\n  - name: in August\n    schedule: { at: '2026-08-01T00:00:00Z' }\n    expect: { status: succeeded }\n",
      "schedule: { cron: '0 0 1 1 *' }",
    );
    const r = await run([file]);
    expect(r.lines[1]).to.equal(
      `    ${file}:3:21: the schedule of nightly (0 0 1 1 * in UTC) does not fire at 2026-08-01T00:00:00Z: it fires at 2026-01-01T00:00:00.000Z and next at 2027-01-01T00:00:00.000Z [schema]`,
    );
  });

  it('says to give `schedule` to a run of a schedule-only playbook given nothing, not to add manual: true', async () => {
    const file = await files('cases:\n  - name: by hand\n    expect: { status: succeeded }\n');
    const r = await run([file]);
    expect(r.lines.slice(0, 2)).to.deep.equal([
      `FAIL ${file}: by hand`,
      `    ${file}:3: expected status succeeded, got no run: playbook nightly does not declare on.manual: give \`schedule: true\` to start the run its schedule starts, or \`schedule: { at: TIME }\` for the fire at that time`,
    ]);
  });

  it('gives the run the queued record the daemon’s scheduler makes', async () => {
    const pb = (await loadPlaybookFile(join(PLAYBOOKS, 'nightly-location-report.yaml'))).playbook as Playbook;
    const [entry] = schedulesOf(pb);
    const at = new Date('2026-11-30T07:00:00Z');
    const run = scheduledRun(entry!, pb, at, 'schedule', { owner: 'o', now: at.getTime() + 5 });
    expect(run).to.deep.include({
      owner: 'o',
      playbook: 'nightly-location-report',
      status: 'queued',
      trigger: {
        type: 'schedule',
        schedule: 'nightly-location-report#America/New_York#0 2 * * *',
        cron: '0 2 * * *',
        scheduledAt: '2026-11-30T07:00:00.000Z',
        reason: 'schedule',
      },
      inputs: {},
      startedAt: '2026-11-30T07:00:00.005Z',
    });
  });
});
