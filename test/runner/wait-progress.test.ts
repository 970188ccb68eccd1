/**
 * A long `wait:` step says what it waits for and until when as it starts, and then how long it has waited,
 * each minute (issue 18), on the run's clock: a virtual one here, so that the test takes no real minutes.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import { VirtualClock } from '../../src/clock.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { EventSource } from '../../src/runner/types.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import type { RunSummary } from '../../src/store/store.js';
import { captureLogger, memoryStore, playbook, type LogLine } from './helpers.js';

const START = Date.UTC(2026, 10, 24, 2, 0, 0);
const at = (ms: number) => new Date(START + ms).toISOString();
const MINUTE = 60_000;

/** A playbook whose steps are `steps`, then a log line. */
const PLAYBOOK = (steps: string) => `
version: 1
name: wait-progress
on: { manual: true }
steps:
${steps}
  - id: after
    uses: log
    with: { message: done }
`;

/** The runner asks its client to prepare the actions a playbook uses; these use none. */
const NO_CALLS = { warm() {} } as unknown as Client;

/** A callback listener no callback reaches: an event wait ends at its timeout. */
const SILENT: EventSource = {
  wait: (_service, _match, signal) =>
    new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
};

describe('runner: a long wait logs its progress', () => {
  let store: SqliteStore;
  let lines: LogLine[];
  before(() => {
    store = memoryStore();
  });
  after(() => store.close());
  beforeEach(() => {
    lines = [];
  });

  function run(steps: string): Promise<RunSummary> {
    return runPlaybook(playbook(PLAYBOOK(steps)), {
      client: NO_CALLS,
      store,
      clock: new VirtualClock(START),
      logger: captureLogger(lines),
      events: SILENT,
    });
  }
  /** The wait's log lines, without the run's id and playbook that every line carries. */
  const waits = () =>
    lines
      .filter((l) => l.message === 'waiting' || l.message === 'still waiting')
      .map(({ level, message, meta: { runId: _r, playbook: _p, ...meta } }) => ({ level, message, ...meta }));

  it('a time: what and until when at the start, then each minute how long so far', async () => {
    const s = await run(`
  - id: pause
    wait: 3m30s`);
    expect(s.status, s.error).to.equal('succeeded');
    const meta = { step: 'pause', for: '3m30s', until: at(3.5 * MINUTE) };
    expect(waits()).to.deep.equal([
      { level: 'info', message: 'waiting', ...meta },
      { level: 'info', message: 'still waiting', ...meta, waited: '1m' },
      { level: 'info', message: 'still waiting', ...meta, waited: '2m' },
      { level: 'info', message: 'still waiting', ...meta, waited: '3m' },
    ]);
    expect(s.endedAt).to.equal(at(3.5 * MINUTE));
  });

  it('an event: the service and its match, until its timeout', async () => {
    const s = await run(`
  - id: report_done
    wait:
      event: { service: Location, match: '\${{ event.requestId == "tx-1" }}' }
      timeout: 2m30s
    onError: continue`);
    expect(s.status, s.error).to.equal('succeeded');
    expect(s.steps.find((x) => x.id === 'report_done')?.error).to.equal('no Location event within 2m30s');
    const meta = {
      step: 'report_done',
      for: 'a Location event',
      match: '${{ event.requestId == "tx-1" }}',
      until: at(2.5 * MINUTE),
    };
    expect(waits()).to.deep.equal([
      { level: 'info', message: 'waiting', ...meta },
      { level: 'info', message: 'still waiting', ...meta, waited: '1m' },
      { level: 'info', message: 'still waiting', ...meta, waited: '2m' },
    ]);
  });

  it('a wait shorter than a minute logs no progress', async () => {
    const s = await run(`
  - id: pause
    wait: 45s`);
    expect(s.status, s.error).to.equal('succeeded');
    expect(waits()).to.deep.equal([]);
    expect(s.endedAt).to.equal(at(45_000));
  });

  it('inside a forEach, at debug, as the steps of its iterations log', async () => {
    const s = await run(`
  - id: loop
    forEach:
      items: [1, 2]
      steps:
        - id: pause
          wait: 1m30s`);
    expect(s.status, s.error).to.equal('succeeded');
    expect(waits().map((w) => `${w.level} ${w.message}`)).to.deep.equal([
      'debug waiting',
      'debug still waiting',
      'debug waiting',
      'debug still waiting',
    ]);
  });
});
