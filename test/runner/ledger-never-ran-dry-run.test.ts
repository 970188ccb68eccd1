/**
 * A dry run is not a run of its playbook for a `ledger.query`'s "no run of playbook `X` in the store" note: a
 * dry run of the nightly made the morning's query of it say nothing, though no real run of the nightly existed and
 * the query never reads a dry run's entries (it found no device, and a forEach over its items did nothing, with
 * no word). Real runs on the emulator over loopback, on a real SQLite file and a real PostgreSQL server
 * (test/store/backends.ts).
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { Store } from '../../src/store/store.js';
import { forEachBackend } from '../store/backends.js';
import { captureLogger, clientFor, emulator, playbook } from './helpers.js';

const NIGHTLY = playbook(`
version: 1
name: my-nightly
on: { manual: true }
steps:
  - id: report
    uses: log
    with: { message: the nightly ran }
`);

const MORNING = playbook(`
version: 1
name: morning
on: { manual: true }
steps:
  - id: missed
    uses: ledger.query
    with: { playbook: my-nightly, step: report, error: SVC CACHE UNAVAILABLE }
`);

const NEVER_RAN =
  'no run of playbook `my-nightly` in the store: the query found no device (is the name right? has it run?)';

forEachBackend('a ledger.query of a playbook that only had dry runs', (b) => {
  let emu: Emulator;
  before(async () => (emu = await emulator({ devicesPerAccount: 2 })));
  after(async () => emu?.close());

  /** The morning's run: its query step's note, and the warnings it logged. */
  async function morning(store: Store, dryRun = false): Promise<{ note?: string; warned: string[] }> {
    const logger = captureLogger();
    const s = await runPlaybook(MORNING, {
      client: clientFor(emu),
      store,
      logger,
      ...(dryRun ? { dryRun } : {}),
    });
    expect(s.status, s.error).to.equal('succeeded');
    const step = s.steps.find((x) => x.id === 'missed');
    return {
      ...(step?.note !== undefined ? { note: step.note } : {}),
      warned: logger.lines.filter((l) => l.level === 'warn').map((l) => l.message),
    };
  }

  it('says the playbook has no run after dry runs of it, and nothing once it really ran', async () => {
    const store = await b.open();
    for (const n of [1, 2, 3]) {
      const dry = await runPlaybook(NIGHTLY, { client: clientFor(emu), store, dryRun: true });
      expect([dry.status, dry.dryRun], `dry run ${n}`).to.deep.equal(['succeeded', true]);
    }
    expect(await morning(store)).to.deep.equal({ note: NEVER_RAN, warned: [`ledger.query: ${NEVER_RAN}`] });
    // The morning's own dry run says it too: what it would find is what the real one would.
    expect(await morning(store, true)).to.deep.equal({
      note: NEVER_RAN,
      warned: [`ledger.query: ${NEVER_RAN}`],
    });

    const real = await runPlaybook(NIGHTLY, { client: clientFor(emu), store });
    expect(real.status, real.error).to.equal('succeeded');
    // A dry run after the real one, the newest of the playbook's runs, does not hide it.
    await runPlaybook(NIGHTLY, { client: clientFor(emu), store, dryRun: true });
    await runPlaybook(NIGHTLY, { client: clientFor(emu), store, dryRun: true });
    expect(await morning(store)).to.deep.equal({ warned: [] });
  });
});
