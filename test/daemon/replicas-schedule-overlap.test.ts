/**
 * A schedule without `overlap: true` ran side by side on two replicas: each one asked only its own pool whether
 * the previous scheduled run was unfinished, so a fire the second replica claimed while the first one's run was
 * still running started a second run. Now a replica also asks the store. Two replicas on one PostgreSQL
 * database, a schedule due every 2 seconds whose runs take 3; the runs' own log lines say when each executed.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { emulatorEnv } from '../helpers/cli.js';
import { sleep } from '../helpers/chaos.js';
import { DaemonProcess } from '../helpers/daemon.js';
import { postgresUrl } from '../helpers/postgres.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';

const PLAYBOOK = join(import.meta.dirname, '..', 'fixtures', 'replicas-overlap', 'every-2s.yaml');

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
    await sleep(12_000);
    // Each skipped fire is counted by the replica that claimed it: once, across the two.
    let counted = 0;
    for (const d of daemons) {
      const text = await (await fetch(`${d.url}/metrics`)).text();
      const line = /^fleetbook_schedule_fires_skipped_total\{playbook="every-2s"\} (\d+)$/m.exec(text);
      counted += Number(line?.[1] ?? 0);
    }
    for (const d of daemons) await d.stop();
    const skippedFires = new Set(
      daemons.flatMap((d) =>
        d
          .logs()
          .filter((l) => l.message === 'skipped: previous run still running')
          .map((l) => l.scheduledAt as string),
      ),
    );
    expect(counted, `skipped fires counted; skipped in the logs: ${[...skippedFires].join(', ')}`)
      .to.be.at.least(1)
      .and.at.most(skippedFires.size);

    const spans = new Map<string, { from?: number; to?: number; by: string }>();
    for (const d of daemons) {
      for (const l of d.logs()) {
        if (l.playbook !== 'every-2s' || (l.message !== 'run started' && l.message !== 'run ended')) continue;
        const s = spans.get(l.runId as string) ?? { by: d.name };
        s[l.message === 'run started' ? 'from' : 'to'] = Date.parse(l.timestamp as string);
        spans.set(l.runId as string, s);
      }
    }
    const ran = [...spans.values()]
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
