/**
 * A schedule without `overlap: true` ran side by side on two replicas: each one asked only its own pool whether
 * the previous scheduled run was unfinished, so a fire the second replica claimed while the first one's run was
 * still running started a second run. Now a replica also asks the store. Two replicas on one PostgreSQL
 * database, a schedule due every 2 seconds whose runs take 3; the runs' own log lines say when each executed.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess, untilDaemons } from '../helpers/daemon.js';
import { postgresUrl } from '../helpers/postgres.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';

const PLAYBOOK = join(import.meta.dirname, '..', 'fixtures', 'replicas-overlap', 'every-2s.yaml');

/** The runs of every-2s the replicas' log lines show, by the replica that ran each: from and to in ms. */
function spans(daemons: readonly DaemonProcess[]): { from?: number; to?: number; by: string }[] {
  const byRun = new Map<string, { from?: number; to?: number; by: string }>();
  for (const d of daemons) {
    for (const l of d.logs()) {
      if (l.playbook !== 'every-2s' || (l.message !== 'run started' && l.message !== 'run ended')) continue;
      const s = byRun.get(l.runId as string) ?? { by: d.name };
      s[l.message === 'run started' ? 'from' : 'to'] = Date.parse(l.timestamp as string);
      byRun.set(l.runId as string, s);
    }
  }
  return [...byRun.values()].filter((s) => s.from !== undefined);
}

/** The fires the replicas skipped, by the replica that did, at the time it said so (ms). */
function skips(daemons: readonly DaemonProcess[]): { scheduledAt: string; at: number; by: string }[] {
  return daemons.flatMap((d) =>
    d
      .logs()
      .filter((l) => l.message === 'skipped: previous run still running')
      .map((l) => ({
        scheduledAt: l.scheduledAt as string,
        at: Date.parse(l.timestamp as string),
        by: d.name,
      })),
  );
}

describe('daemon: a schedule without overlap, on two replicas', function () {
  this.timeout(90_000);
  let emu: Emulator;
  const daemons: DaemonProcess[] = [];

  after(async () => {
    for (const d of daemons) await d.kill();
    await emu?.close();
  });

  it('never runs two of its runs at once', async () => {
    emu = await startEmulator({ port: 0, timeScale: 0 });
    const url = await postgresUrl();
    for (const name of ['first replica', 'second replica']) {
      daemons.push(
        await DaemonProcess.start(name, {
          playbooks: PLAYBOOK,
          state: url,
          env: {
            ...emulatorEnv(emu),
            FLEETBOOK_CALLBACK_USERNAME: 'overlap-listener',
            FLEETBOOK_CALLBACK_PASSWORD: 'overlap-listener-password',
          },
        }),
      );
    }
    // Until two runs have ended and a fire was skipped by the replica that did not start the run still running
    // (what its own pool could not know), or a run started beside another (which the checks below show).
    await untilDaemons(
      daemons,
      "two runs ended and a fire skipped for the other replica's run",
      async () => {
        const runs = spans(daemons);
        if (runs.filter((r) => r.to !== undefined).length < 2) return undefined;
        const during = (at: number, r: (typeof runs)[number]) =>
          r.from! <= at && (r.to === undefined || r.to >= at);
        const crossSkip = skips(daemons).some((k) => runs.some((r) => r.by !== k.by && during(k.at, r)));
        const overlap = runs.some((r) => runs.some((o) => o !== r && during(o.from!, r)));
        return crossSkip || overlap || undefined;
      },
      60_000,
    );
    // Each skipped fire is counted by the replica that claimed it: once, across the two.
    let counted = 0;
    for (const d of daemons) {
      const text = await (await fetch(`${d.url}/metrics`)).text();
      const line = /^fleetbook_schedule_fires_skipped_total\{playbook="every-2s"\} (\d+)$/m.exec(text);
      counted += Number(line?.[1] ?? 0);
    }
    for (const d of daemons) await d.stop();
    const skippedFires = new Set(skips(daemons).map((k) => k.scheduledAt));
    expect(counted, `skipped fires counted; skipped in the logs: ${[...skippedFires].join(', ')}`)
      .to.be.at.least(1)
      .and.at.most(skippedFires.size);

    const ran = spans(daemons)
      .filter((s) => s.from !== undefined && s.to !== undefined)
      .sort((a, b) => a.from! - b.from!);
    expect(ran.length, 'runs that ran').to.be.at.least(2);
    for (let i = 1; i < ran.length; i++) {
      expect(ran[i]!.from, `a run started while another ran: ${JSON.stringify(ran)}`).to.be.at.least(
        ran[i - 1]!.to!,
      );
    }
  });
});
