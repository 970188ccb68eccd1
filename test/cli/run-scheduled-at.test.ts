/**
 * `fleetbook run PLAYBOOK --scheduled-at TIME`: a backfill of a fire time the daemon did not run (a night missed
 * with `missed: latest`, or a run that failed), started as the scheduler starts it: the schedule's trigger, with
 * reason `backfill`, no inputs of its own, and `run.date` the night's. Refused for a playbook without a
 * schedule, a time its schedule does not fire at, a time not written in full with its offset, and one still to
 * come. The built binary on its embedded emulator.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';

/** A nightly report named by its night: scheduled only, no `manual: true`. */
const NIGHTLY = `version: 1
name: nightly
on:
  schedule: { cron: '0 2 * * *', timezone: America/New_York, missed: latest }
inputs:
  account: { type: string, default: '0000123456-00001' }
steps:
  - id: save
    uses: report.write
    with:
      path: '\${{ run.date }}-nightly.csv'
      rows: '\${{ [{"date": run.date, "scheduledAt": run.scheduledAt, "account": inputs.account}] }}'
`;

const BY_HAND = `version: 1
name: by-hand
on: { manual: true }
steps:
  - id: hello
    uses: log
    with: { message: 'on \${{ run.date }}, scheduled at "\${{ run.scheduledAt }}"' }
`;

describe('fleetbook run --scheduled-at: a backfill of a missed fire', function () {
  this.timeout(60_000);
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetbook-run-scheduled-at-'));
    env = { FLEETBOOK_STATE: join(dir, 'state.db'), FLEETBOOK_REPORTS_DIR: join(dir, 'reports') };
    await writeFile(join(dir, 'nightly.yaml'), NIGHTLY);
    await writeFile(join(dir, 'by-hand.yaml'), BY_HAND);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("runs the night's run as its schedule would: its trigger, its date, the inputs' defaults", async () => {
    const r = await fleetbook(
      ['run', join(dir, 'nightly.yaml'), '--scheduled-at', '2025-11-29T02:00:00-05:00', '--json'],
      env,
    );
    expect(r.code, r.stderr).to.equal(0);
    const { runId } = JSON.parse(r.stdout) as { runId: string };
    expect(await readdir(join(dir, 'reports'))).to.deep.equal(['2025-11-29-nightly.csv']);
    expect(await readFile(join(dir, 'reports', '2025-11-29-nightly.csv'), 'utf8')).to.equal(
      'date,scheduledAt,account\n2025-11-29,2025-11-29T07:00:00.000Z,0000123456-00001\n',
    );

    const list = await fleetbook(['runs', 'list'], env);
    expect(list.code, list.stderr).to.equal(0);
    const row = list.stdout.split('\n').find((l) => l.startsWith(runId));
    expect(row, list.stdout).to.match(/ succeeded +schedule, backfill for 2025-11-29T07:00:00Z +nightly /);
    const json = await fleetbook(['runs', 'list', '--json'], env);
    const [run] = JSON.parse(json.stdout) as { id: string; trigger: unknown; inputs: unknown }[];
    expect(run).to.deep.include({
      id: runId,
      trigger: {
        type: 'schedule',
        schedule: 'nightly#America/New_York#0 2 * * *',
        cron: '0 2 * * *',
        scheduledAt: '2025-11-29T07:00:00.000Z',
        reason: 'backfill',
      },
    });
  });

  it('refuses a time the schedule does not fire at, saying when it does', async () => {
    const r = await fleetbook(
      ['run', join(dir, 'nightly.yaml'), '--scheduled-at', '2025-11-29T02:30:00-05:00'],
      env,
    );
    expect(r.code).to.equal(2);
    expect(r.stderr).to.equal(
      'fleetbook: --scheduled-at: the schedule of nightly (0 2 * * * in America/New_York) does not fire at 2025-11-29T02:30:00-05:00: it fires at 2025-11-29T07:00:00.000Z and next at 2025-11-30T07:00:00.000Z\n',
    );
  });

  it('refuses a playbook without a schedule', async () => {
    const r = await fleetbook(
      ['run', join(dir, 'by-hand.yaml'), '--scheduled-at', '2025-11-29T07:00:00Z'],
      env,
    );
    expect(r.code).to.equal(2);
    expect(r.stderr).to.equal(
      'fleetbook: --scheduled-at: playbook by-hand has no on.schedule: no schedule starts it (run it without --scheduled-at)\n',
    );
  });

  for (const text of [
    '2025-11-29T02:00:00',
    '2025-11-29',
    '2025-02-30T07:00:00Z',
    '2025-11-29T24:00:00Z',
    'yesterday',
  ])
    it(`refuses ${JSON.stringify(text)}: not a date and time with its offset`, async () => {
      const r = await fleetbook(['run', join(dir, 'nightly.yaml'), '--scheduled-at', text], env);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.equal(
        `fleetbook: --scheduled-at takes a date and time with its offset (2026-11-30T02:00:00-05:00, 2026-11-30T07:00:00Z), got ${JSON.stringify(text)}\n`,
      );
    });

  it('refuses a fire still to come: the daemon runs it then', async () => {
    const r = await fleetbook(
      ['run', join(dir, 'nightly.yaml'), '--scheduled-at', '2099-11-29T02:00:00-05:00'],
      env,
    );
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(
      /^fleetbook: --scheduled-at 2099-11-29T02:00:00-05:00 is still to come: the schedule starts that run then\n$/,
    );
  });

  it('refuses inputs or an event beside it: a scheduled run has neither', async () => {
    const inputs = await fleetbook(
      ['run', join(dir, 'nightly.yaml'), '--scheduled-at', '2025-11-29T07:00:00Z', '--input', 'account=x'],
      env,
    );
    expect(inputs.code).to.equal(2);
    expect(inputs.stderr).to.equal(
      'fleetbook: --input and --scheduled-at do not go together: a scheduled run starts without inputs of its own (with their defaults)\n',
    );
    const event = await fleetbook(
      [
        'run',
        join(dir, 'nightly.yaml'),
        '--scheduled-at',
        '2025-11-29T07:00:00Z',
        '--event',
        join(dir, 'none.json'),
      ],
      env,
    );
    expect(event.code).to.equal(2);
    expect(event.stderr).to.equal(
      'fleetbook: --event and --scheduled-at do not go together: a scheduled run starts without an event\n',
    );
  });

  it('leaves run.scheduledAt empty and run.date the start’s for a run no schedule started', async () => {
    const r = await fleetbook(['run', join(dir, 'by-hand.yaml'), '--json'], {
      ...env,
      FLEETBOOK_LOG_LEVEL: 'info',
    });
    expect(r.code, r.stderr).to.equal(0);
    const { startedAt } = JSON.parse(r.stdout) as { startedAt: string };
    expect(r.stderr).to.include(`on ${startedAt.slice(0, 10)}, scheduled at \\"\\"`);
  });
});
