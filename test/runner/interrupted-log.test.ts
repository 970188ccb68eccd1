/**
 * What the log says of a run interrupted (a stop, a lease lost), on each store: it said "it resumes at the next
 * start" on PostgreSQL too, where a replica takes the run up at its next lease renewal. A real SQLite file and a
 * real PostgreSQL server (test/store/backends.ts), the run's steps on an emulator over loopback.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { forEachBackend } from '../store/backends.js';
import { captureLogger, clientFor, emulator, interruptedRun, playbook } from './helpers.js';

const PB = playbook(`version: 1
name: hold
on: { manual: true }
steps:
  - { id: first, uses: log, with: { message: one } }
  - { id: pause, wait: 10m }
`);

const SAID: Record<string, string> = {
  SQLite:
    'run interrupted; `fleetbook serve` on this state file resumes it: at its next start, or at its next lease renewal (within a third of FLEETBOOK_LEASE) if one is running',
  PostgreSQL:
    'run interrupted; a replica (`fleetbook serve`) on this database takes it up at its next lease renewal, within a third of FLEETBOOK_LEASE, or the next one to start',
};

forEachBackend('the log line of an interrupted run', (b) => {
  let emu: Emulator;
  before(async () => (emu = await emulator()));
  after(async () => emu?.close());

  it('says who resumes it, and when', async () => {
    const store = await b.open();
    const logger = captureLogger();
    await interruptedRun(PB, { client: clientFor(emu), store, logger, runId: 'r-int' }, async () =>
      logger.lines.some((l) => l.message === 'one'),
    );
    expect(
      logger.lines.filter((l) => l.message.startsWith('run interrupted')).map((l) => l.message),
    ).to.deep.equal([SAID[b.name]]);
  });
});
