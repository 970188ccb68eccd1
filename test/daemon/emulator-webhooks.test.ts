/**
 * `npm start` (the daemon on its embedded emulator, with the example playbooks) in an ops engineer's shell, where
 * FLEETBOOK_SECRET_ONCALL_WEBHOOK names the real on-call channel, posted the made-up suspensions of the emulator
 * to it, about once a second. Webhooks are now held back on the embedded emulator unless
 * FLEETBOOK_EMULATOR_WEBHOOKS=send: the step fails saying why and how to send them, and the start says so once.
 *
 * The built binary in a child process, with nothing but the secret configured (no FLEETBOOK_API_URL), over real
 * loopback HTTP. The receiver stands for the real channel: it is on loopback, which FLEETBOOK_WEBHOOK_ALLOW
 * allows, so that it receives what the daemon would send anywhere. dist/ must be built (`npm test` builds it).
 */
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { fleetbook } from '../helpers/cli.js';
import { DaemonProcess, untilDaemons } from '../helpers/daemon.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOKS = join(import.meta.dirname, '..', '..', 'playbooks');
const HELD = /^webhooks are held back on the embedded emulator/;

/** The first run of suspend-on-overuse whose `tell` step (the page) has ended, and that step. */
async function pagedRun(d: DaemonProcess): Promise<{ run: RunSummary; tell: RunSummary['steps'][number] }> {
  return untilDaemons(
    [d],
    'a run of suspend-on-overuse to reach its page',
    async () => {
      const runs = (await (await fetch(`${d.url}/runs?playbook=suspend-on-overuse`)).json()) as {
        id: string;
        status: string;
      }[];
      for (const r of runs.filter((x) => x.status !== 'running' && x.status !== 'queued')) {
        const run = (await (await fetch(`${d.url}/runs/${r.id}`)).json()) as RunSummary;
        const tell = run.steps?.find((s) => s.id === 'tell');
        if (tell && tell.status !== 'skipped') return { run, tell };
      }
      return undefined;
    },
    60_000,
  );
}

describe('serve on the embedded emulator: webhooks never reach a real channel unless asked', function () {
  this.timeout(120_000);
  let tmp: string;
  let held: Receiver;
  let sent: Receiver;
  const daemons: DaemonProcess[] = [];

  before(async () => {
    tmp = tempDir('fleetbook-emulator-webhooks-');
    held = await startReceiver();
    sent = await startReceiver();
  });
  after(async () => {
    for (const d of daemons) await d.kill();
    await held?.close();
    await sent?.close();
  });

  it("holds back the example playbooks' pages: the step fails saying why, the start says so once", async () => {
    const d = await DaemonProcess.start('emulator, on-call secret set', {
      playbooks: PLAYBOOKS,
      state: join(tmp, 'held.db'),
      env: {
        FLEETBOOK_SECRET_ONCALL_WEBHOOK: held.url,
        FLEETBOOK_WEBHOOK_ALLOW: '127.0.0.1',
        FLEETBOOK_LOG_LEVEL: 'info',
      },
    });
    daemons.push(d);
    const { run, tell } = await pagedRun(d);
    expect(held.bodies, 'posts the channel received').to.deep.equal([]);
    // Said once at the start, before the daemon listens, as information: a safe default, not a problem.
    const notices = d.logs().filter((l) => HELD.test(String(l.message)));
    expect(notices.map((l) => [l.level, l.message])).to.deep.equal([
      [
        'info',
        'webhooks are held back on the embedded emulator: notify.webhook sends nothing (secrets.ONCALL_WEBHOOK is set to a URL); FLEETBOOK_EMULATOR_WEBHOOKS=send sends them',
      ],
    ]);
    // The page that was not sent is a failed step naming the host, why, and how to send it; the playbook's
    // `onError: continue` goes on, as when a channel cannot be reached.
    expect(tell.status).to.equal('failed');
    expect(tell.error).to.equal(
      'notify.webhook: not sent to 127.0.0.1: fleetbook is on its embedded emulator (no FLEETBOOK_API_URL), whose events are made up, and holds webhooks back so as not to page a real channel; FLEETBOOK_EMULATOR_WEBHOOKS=send sends them',
    );
    expect(tell.attempts, 'a held webhook is not retried').to.equal(1);
    expect(run.status).to.equal('succeeded');
    // The log says it too, on the line of the playbook's first held page (the next are not warned of each).
    const lines = d
      .logs()
      .filter(
        (l) => l.playbook === 'suspend-on-overuse' && JSON.stringify(l).includes('not sent to 127.0.0.1'),
      );
    expect(lines.length, d.stderr.slice(-3000)).to.be.greaterThan(0);
    await d.stop('SIGTERM');
    // And `fleetbook runs show`, from the state file.
    const shown = await fleetbook(['runs', 'show', run.runId], { FLEETBOOK_STATE: join(tmp, 'held.db') });
    expect(shown.code, shown.stderr).to.equal(0);
    const line = shown.stdout.split('\n').find((l) => l.trimStart().startsWith('tell '));
    expect(line, shown.stdout).to.match(/failed/);
    expect(shown.stdout).to.include('not sent to 127.0.0.1');
    expect(shown.stdout).to.include('FLEETBOOK_EMULATOR_WEBHOOKS=send');
    expect(held.bodies, 'posts the channel received').to.deep.equal([]);
  });

  it('warns of a held page once per playbook, and says a reload added one that holds them', async () => {
    const dir = join(tmp, 'playbooks');
    await cp(PLAYBOOKS, dir, { recursive: true });
    const token = 'held-webhooks-daemon-token-0123';
    const d = await DaemonProcess.start('emulator, pages held, reloaded', {
      playbooks: dir,
      state: join(tmp, 'reloaded.db'),
      env: {
        FLEETBOOK_SECRET_ONCALL_WEBHOOK: held.url,
        FLEETBOOK_WEBHOOK_ALLOW: '127.0.0.1',
        FLEETBOOK_DAEMON_TOKEN: token,
        FLEETBOOK_LOG_LEVEL: 'info',
      },
    });
    daemons.push(d);
    /** The runs of `playbook` that ended whose `tell` step failed. */
    const failedPages = async (playbook: string) => {
      const runs = (await (await fetch(`${d.url}/runs?playbook=${playbook}`)).json()) as {
        id: string;
        status: string;
      }[];
      const out: string[] = [];
      for (const r of runs.filter((x) => x.status !== 'running' && x.status !== 'queued')) {
        const run = (await (await fetch(`${d.url}/runs/${r.id}`)).json()) as RunSummary;
        if (run.steps?.find((s) => s.id === 'tell')?.status === 'failed') out.push(r.id);
      }
      return out;
    };
    const warned = (playbook: string) =>
      d
        .logs()
        .filter(
          (l) =>
            l.playbook === playbook &&
            l.level === 'warn' &&
            JSON.stringify(l).includes('not sent to 127.0.0.1'),
        );
    // Three pages of the example held: one warning, saying that the next are not warned of each.
    const paged = await untilDaemons([d], 'three held pages of suspend-on-overuse', async () => {
      const ids = await failedPages('suspend-on-overuse');
      return ids.length >= 3 ? ids : undefined;
    });
    expect(
      warned('suspend-on-overuse').map((l) => [l.message, l.step, l.note]),
      `${paged.length} pages held; the log:\n${d.stderr.slice(-3000)}`,
    ).to.deep.equal([
      [
        'step failed',
        'tell',
        'a webhook held back on the embedded emulator: the next ones of this playbook are not warned of each (logged at debug level, counted at 10, 100, 1000, ...); each run still records its step failed',
      ],
    ]);

    // A playbook a reload adds that would page too: said as at the start, naming it.
    await writeFile(
      join(dir, 'page-on-demand.yaml'),
      [
        'version: 1',
        'name: page-on-demand',
        'on:',
        '  manual: true',
        'steps:',
        '  - id: tell',
        '    uses: notify.webhook',
        '    with:',
        '      url: ${{ secrets.ONCALL_WEBHOOK }}',
        '      body: { text: paged on demand }',
        '    onError: continue',
        '',
      ].join('\n'),
    );
    const notices = await untilDaemons([d], 'the held webhooks said after the reload', async () => {
      const lines = d.logs().filter((l) => HELD.test(String(l.message)));
      return lines.length >= 2 ? lines : undefined;
    });
    expect(notices.map((l) => [l.level, l.message, l.playbooks])).to.deep.equal([
      [
        'info',
        'webhooks are held back on the embedded emulator: notify.webhook sends nothing (secrets.ONCALL_WEBHOOK is set to a URL); FLEETBOOK_EMULATOR_WEBHOOKS=send sends them',
        ['suspend-on-overuse'],
      ],
      [
        'info',
        'webhooks are held back on the embedded emulator: notify.webhook sends nothing (secrets.ONCALL_WEBHOOK is set to a URL); FLEETBOOK_EMULATOR_WEBHOOKS=send sends them',
        ['page-on-demand'],
      ],
    ]);
    // Its own first held page is warned of, its second is not.
    for (let i = 0; i < 2; i++) {
      const runId = await d.startRun('page-on-demand', token);
      await untilDaemons([d], `run ${runId} ended`, async () =>
        (await failedPages('page-on-demand')).includes(runId) ? true : undefined,
      );
    }
    expect(warned('page-on-demand').map((l) => [l.message, l.step])).to.deep.equal([['step failed', 'tell']]);
    expect(warned('suspend-on-overuse').length, 'still one for the example').to.equal(1);
    expect(held.bodies, 'posts the channel received').to.deep.equal([]);
    await d.stop('SIGTERM');
  });

  it('sends them with FLEETBOOK_EMULATOR_WEBHOOKS=send, with no notice', async () => {
    const d = await DaemonProcess.start('emulator, webhooks sent', {
      playbooks: PLAYBOOKS,
      state: join(tmp, 'sent.db'),
      env: {
        FLEETBOOK_SECRET_ONCALL_WEBHOOK: sent.url,
        FLEETBOOK_WEBHOOK_ALLOW: '127.0.0.1',
        FLEETBOOK_EMULATOR_WEBHOOKS: 'send',
        FLEETBOOK_LOG_LEVEL: 'info',
      },
    });
    daemons.push(d);
    // A variable fleetbook reads: not warned of as a misspelling.
    expect(d.stderr).to.not.include(
      'FLEETBOOK_EMULATOR_WEBHOOKS is set, but fleetbook reads no such variable',
    );
    expect(d.logs().filter((l) => HELD.test(String(l.message)))).to.deep.equal([]);
    const { tell } = await pagedRun(d);
    expect(tell.status, tell.error).to.equal('succeeded');
    expect(sent.bodies.length).to.be.greaterThan(0);
    expect((sent.bodies[0] as { text: string }).text).to.match(
      /^Suspended \d+ of \d+ device\(s\) of account /,
    );
    await d.stop('SIGTERM');
  });

  it('refuses a value of FLEETBOOK_EMULATOR_WEBHOOKS other than hold or send, naming it', async () => {
    const r = await fleetbook(['serve', '--playbooks', PLAYBOOKS, '--state', join(tmp, 'bad.db')], {
      FLEETBOOK_EMULATOR_WEBHOOKS: 'yes',
    });
    expect(r.code).to.equal(2);
    expect(r.stderr).to.include('FLEETBOOK_EMULATOR_WEBHOOKS: must be one of "hold", "send"');
  });
});
