/**
 * A backfill (`fleetbook run PLAYBOOK --scheduled-at TIME`) and the daemon's schedule on one state file.
 * - A night backfilled while the daemon was down was made up again by a daemon with `missed: all` at its next
 *   start: two runs of one night, the second report over the first. The daemon now makes up only the nights no
 *   run of the schedule was for, and says which it left to the backfill.
 * - A fire due while a backfill runs is skipped, as any fire due while a scheduled run of the playbook is
 *   unfinished (the overlap rule): its log line said "previous run still running", and now names the run that
 *   held it back, the backfill.
 *
 * Real daemons (`fleetbook serve`, the built binary) and the real CLI on a state file; the schedule's last fire
 * written into the state file, as a daemon that stopped days ago left it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { SqliteStore } from '../../src/store/sqlite.js';
import { fleetbook } from '../helpers/cli.js';
import { DaemonWorld, runsIn, untilDaemons } from '../helpers/daemon.js';
import { threeMissedNights } from '../helpers/missed-nights.js';

describe('a backfill and the schedule it is a run of', function () {
  this.timeout(90_000);
  let world: DaemonWorld;

  before(async () => {
    world = await DaemonWorld.create('backfilled-nights', {
      user: 'backfill-listener',
      password: 'backfill-password',
    });
  });
  after(async () => world?.close());

  it('missed: all does not make up again a night a backfill ran', async () => {
    const { playbooks, file, state, fires } = await threeMissedNights(world, 'nights', 'nights.db');

    // The middle night, by hand, while the daemon is down.
    const reports = join(world.dir, 'reports');
    const backfill = await fleetbook(['run', file, '--scheduled-at', fires[1]!, '--json'], {
      FLEETBOOK_STATE: state,
      FLEETBOOK_REPORTS_DIR: reports,
    });
    expect(backfill.code, backfill.stderr).to.equal(0);
    const { runId } = JSON.parse(backfill.stdout) as { runId: string };

    const daemon = await world.start('backfilled-nights daemon', playbooks, {
      state,
      env: { FLEETBOOK_REPORTS_DIR: reports },
    });
    const made = await untilDaemons([daemon], 'the nights made up', async () => {
      const runs = runsIn(state, 'nightly');
      return runs.filter((r) => r.status === 'succeeded').length >= 3 &&
        daemon.logs().some((l) => l.message === 'runs missed while down')
        ? runs
        : undefined;
    });
    // Let any run more the daemon would make up be stored, and stop it: then read what it did.
    await daemon.stop();
    const db = new SqliteStore(state);
    const scheduledAt = async (id: string) =>
      ((await db.getRun(id))?.trigger as { scheduledAt: string; reason: string } | undefined) ?? undefined;
    const byNight: string[] = [];
    for (const r of runsIn(state, 'nightly')) {
      const t = await scheduledAt(r.id);
      byNight.push(`${t?.scheduledAt} ${t?.reason}${r.id === runId ? ' (by hand)' : ''}`);
    }
    await db.close();
    expect(byNight.sort(), `${made.length} runs; the log:\n${daemon.stderr.slice(-3000)}`).to.deep.equal([
      `${fires[0]} missed`,
      `${fires[1]} backfill (by hand)`,
      `${fires[2]} missed`,
    ]);
    const left = daemon.logs().filter((l) => l.message === 'not made up: a run of the schedule was for it');
    expect(left.map((l) => [l.level, l.scheduledAt, l.runId])).to.deep.equal([['info', fires[1], runId]]);
    const summary = daemon.logs().find((l) => l.message === 'runs missed while down');
    expect(summary).to.include({ missed: 3, fired: 2 });
  });

  it('a backfill pruned by the retention before the daemon caught up is still not made up again', async () => {
    const { playbooks, file, state, fires } = await threeMissedNights(world, 'pruned', 'pruned.db');
    const reports = join(world.dir, 'pruned-reports');
    const env = { FLEETBOOK_STATE: state, FLEETBOOK_REPORTS_DIR: reports };
    const backfill = await fleetbook(['run', file, '--scheduled-at', fires[1]!, '--json'], env);
    expect(backfill.code, backfill.stderr).to.equal(0);
    const { runId } = JSON.parse(backfill.stdout) as { runId: string };
    // Ended a few milliseconds ago: a retention of one millisecond is past it.
    await new Promise((r) => setTimeout(r, 20));
    const early = await fleetbook(['store', 'prune', '--older-than', '1ms'], env);
    expect(early.code, early.stderr).to.equal(0);

    const daemon = await world.start('pruned-nights daemon', playbooks, {
      state,
      env: { FLEETBOOK_REPORTS_DIR: reports },
    });
    await untilDaemons([daemon], 'the nights made up', async () =>
      runsIn(state, 'nightly').filter((r) => r.status === 'succeeded').length >= 3 &&
      daemon.logs().some((l) => l.message === 'runs missed while down')
        ? true
        : undefined,
    );
    await daemon.stop();
    const db = new SqliteStore(state);
    const byNight: string[] = [];
    for (const r of runsIn(state, 'nightly')) {
      const t = (await db.getRun(r.id))?.trigger as { scheduledAt: string; reason: string } | undefined;
      byNight.push(`${t?.scheduledAt} ${t?.reason}${r.id === runId ? ' (by hand)' : ''}`);
    }
    await db.close();
    expect(byNight.sort(), daemon.stderr.slice(-3000)).to.deep.equal([
      `${fires[0]} missed`,
      `${fires[1]} backfill (by hand)`,
      `${fires[2]} missed`,
    ]);
    expect(daemon.logs().find((l) => l.message === 'runs missed while down')).to.include({
      missed: 3,
      fired: 2,
    });

    // The schedule has passed that night: the retention now removes the backfill as any other run.
    await new Promise((r) => setTimeout(r, 20));
    const later = await fleetbook(['store', 'prune', '--older-than', '1ms'], env);
    expect(later.code, later.stderr).to.equal(0);
    expect(runsIn(state, 'nightly').map((r) => r.id)).to.not.include(runId);
  });

  it('a fire due while a backfill runs is skipped by the overlap rule, the log naming the backfill', async () => {
    // Every 3 seconds; a run for a fire before `cutoff` (the backfill) waits 8 seconds, the daemon's do not.
    const cutoff = new Date(Math.floor(Date.now() / 3000) * 3000 - 3000);
    const at = new Date(cutoff.getTime() - 3000).toISOString();
    const playbooks = join(world.dir, 'ticks');
    await mkdir(playbooks);
    const file = join(playbooks, 'ticks.yaml');
    await writeFile(
      file,
      [
        'version: 1',
        'name: ticks',
        'on:',
        "  schedule: { cron: '*/3 * * * * *', missed: none }",
        'steps:',
        '  - id: hold',
        `    if: \${{ run.scheduledAt < "${cutoff.toISOString()}" }}`,
        '    wait: 8s',
        '  - { id: done, uses: log, with: { message: tick } }',
        '',
      ].join('\n'),
    );
    const state = world.state('ticks.db');
    const daemon = await world.start('ticks daemon', playbooks, { state });
    await untilDaemons([daemon], 'a run of the daemon', async () =>
      runsIn(state, 'ticks').some((r) => r.status === 'succeeded') ? true : undefined,
    );
    const backfill = fleetbook(['run', file, '--scheduled-at', at, '--json'], { FLEETBOOK_STATE: state });
    const skips = await untilDaemons([daemon], 'a fire skipped while the backfill runs', async () => {
      const lines = daemon.logs().filter((l) => l.message === 'skipped: previous run still running');
      return lines.length ? lines : undefined;
    });
    const done = await backfill;
    expect(done.code, done.stderr).to.equal(0);
    const { runId } = JSON.parse(done.stdout) as { runId: string };
    // Each fire due while it ran: one line each, the same words.
    const said = daemon
      .logs()
      .filter((l) => l.message === 'skipped: previous run still running')
      .map((l) => JSON.stringify([l.level, l.playbook, l.runId, l.previous]));
    expect(said.length).to.be.at.least(skips.length);
    expect(
      [...new Set(said)].map((l) => JSON.parse(l) as unknown),
      daemon.stderr.slice(-3000),
    ).to.deep.equal([['warn', 'ticks', runId, `schedule, backfill for ${at.replace('.000Z', 'Z')}`]]);
    await daemon.stop();
  });
});
