/**
 * `missed: all` on a schedule that does not allow overlap (the default) started every missed run at once: a
 * daemon down for three minutes of a `* * * * *` schedule, started again, ran its three missed runs side by side,
 * while the same schedule skips an on-time fire as long as its previous run is unfinished. Now the runs of such a
 * schedule execute one at a time, oldest first: each missed run waits for the one before it.
 *
 * A real daemon (`fleetbook serve`, the built binary) on a state file whose schedule last fired three minutes
 * before the start; the runs' own log lines say when each one executed.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { stateFile } from '../helpers/cli.js';
import { DaemonWorld, runsIn } from '../helpers/daemon.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'missed-all');
const MINUTE = 60_000;

describe('missed: all without overlap runs the missed runs one after another', function () {
  this.timeout(60_000);
  let world: DaemonWorld;

  before(async () => {
    world = await DaemonWorld.create('missed-overlap', {
      user: 'missed-listener',
      password: 'missed-password',
    });
  });
  after(async () => world?.close());
  // Fired three minutes ago, to the minute: three fires were missed, or four when the start crosses a minute.
  const state = stateFile(async (store) => {
    const last = Math.floor(Date.now() / MINUTE) * MINUTE - 3 * MINUTE;
    await store.recordFire('catch-up#UTC#* * * * *', new Date(last).toISOString());
  });

  it('three missed runs, oldest first, none starting before the one before it ended', async () => {
    const daemon = await world.start('missed-overlap daemon', FIXTURES, { state: state.file });
    const missed = () =>
      daemon
        .logs()
        .filter((l) => l.message === 'schedule fired' && l.reason === 'missed')
        .map((l) => l.runId as string);
    const ended = () =>
      new Set(
        runsIn(state.file, 'catch-up')
          .filter((r) => r.status === 'succeeded')
          .map((r) => r.id),
      );
    const deadline = Date.now() + 20_000;
    while (missed().length < 3 || !missed().every((id) => ended().has(id))) {
      if (Date.now() > deadline)
        throw new Error(`the missed runs did not end:\n${daemon.stderr.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await daemon.stop();

    const lines = daemon.logs();
    const when = (message: string, runId: string) =>
      Date.parse(lines.find((l) => l.message === message && l.runId === runId)?.timestamp as string);
    const ids = missed();
    expect(ids.length).to.be.within(3, 4);
    const spans = ids.map((id) => ({ id, from: when('run started', id), to: when('run ended', id) }));
    for (let i = 1; i < spans.length; i++) {
      expect(
        spans[i]!.from,
        `missed run ${i + 1} started while run ${i} was running: ${JSON.stringify(spans)}`,
      ).to.be.at.least(spans[i - 1]!.to);
    }
  });
});
