/**
 * On the embedded emulator every page of `notify.webhook` is held back and fails its step: the example playbook
 * pages about once a second, and each was a `warn` "step failed" line. The first of each playbook of a process
 * is still a warning, saying that the next are not; the next are logged at debug level, and their number at 10,
 * 100, ... at info. Each run still records its step failed. Runs on a real emulator and in-memory SQLite store
 * (test/runner/helpers.ts), the engine's settings as `serve` compiles them on the emulator.
 */
import { expect } from 'chai';
import { engineSettings } from '../../src/actions/settings.js';
import { runPlaybook } from '../../src/runner/runner.js';
import { captureLogger, onEmulator, playbook, stepOf } from './helpers.js';

const paging = (name: string) =>
  playbook(`version: 1
name: ${name}
on: { manual: true }
steps:
  - id: tell
    uses: notify.webhook
    with: { url: 'https://hooks.example.com/oncall', body: { text: paged } }
    onError: continue
  - id: other
    uses: notify.webhook
    with: { url: 'not a url' }
    onError: continue
`);

describe('held webhooks in the log', function () {
  this.timeout(30_000);
  const t = onEmulator();

  it('warns of the first of each playbook, counts the next, and warns of any other failure each time', async () => {
    const engine = engineSettings({ embedded: true });
    const logger = captureLogger();
    const [first, second] = [paging('first-pager'), paging('second-pager')];
    for (let i = 0; i < 12; i++) {
      const s = await runPlaybook(first, { client: t.client, store: t.store, logger, engine });
      expect(stepOf(s, 'tell').status, `run ${i + 1}: its step still fails`).to.equal('failed');
      expect(stepOf(s, 'tell').error).to.match(/^notify\.webhook: not sent to hooks\.example\.com:/);
    }
    await runPlaybook(second, { client: t.client, store: t.store, logger, engine });
    const said = (pb: string, step: string) =>
      logger.lines
        .filter(
          (l) =>
            l.meta.playbook === pb &&
            l.meta.step === step &&
            (l.message === 'step failed' || l.message.startsWith('webhooks held back')),
        )
        .map((l) => `${l.level} ${l.message}${l.meta.note ? ` (${String(l.meta.note)})` : ''}`);
    const note =
      'a webhook held back on the embedded emulator: the next ones of this playbook are not warned of each (logged at debug level, counted at 10, 100, 1000, ...); each run still records its step failed';
    expect(said('first-pager', 'tell')).to.deep.equal([
      `warn step failed (${note})`,
      ...Array(9).fill('debug step failed'),
      'info webhooks held back on the embedded emulator: 10 of this playbook so far',
      'debug step failed',
      'debug step failed',
    ]);
    expect(said('second-pager', 'tell')).to.deep.equal([`warn step failed (${note})`]);
    // A failure that is no held webhook (a url that is none) is warned of every time.
    expect(said('first-pager', 'other')).to.deep.equal(Array(12).fill('warn step failed'));
  });

  it('warns of every refused webhook when webhooks are sent (not on the emulator)', async () => {
    const logger = captureLogger();
    // Refused before anything is sent: a loopback address, not allowed.
    const pb = playbook(`version: 1
name: sent-pager
on: { manual: true }
steps:
  - id: tell
    uses: notify.webhook
    with: { url: 'http://127.0.0.1:9/oncall', body: { text: paged } }
    onError: continue
`);
    for (let i = 0; i < 2; i++)
      await runPlaybook(pb, { client: t.client, store: t.store, logger, engine: engineSettings({}) });
    expect(
      logger.lines.filter((l) => l.meta.step === 'tell' && l.message === 'step failed').map((l) => l.level),
    ).to.deep.equal(['warn', 'warn']);
  });
});
