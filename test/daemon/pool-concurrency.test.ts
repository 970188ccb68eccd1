/**
 * A playbook's `concurrency` in the daemon's pool: runs of one key beyond its limit queue (and run after, in
 * order), are skipped, or cancel the one running; runs of another key go on. And cancels: a cancelled run's
 * `finally` runs, until a second cancel or the pool's stop. The runs are real: stored in SQLite, executed by the
 * runner, each holding its key with a `wait`.
 */
import { expect } from 'chai';
import { engineSettings } from '../../src/actions/settings.js';
import type { Client } from '../../src/api/client.js';
import { RunPool } from '../../src/daemon/pool.js';
import type { Emulator } from '../../src/emulator/index.js';
import { InProcessDeviceLocks } from '../../src/runner/locks.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import type { RunRecord } from '../../src/store/store.js';
import {
  captureLogger,
  clientFor,
  emulator,
  memoryStore,
  playbook,
  type LogLine,
} from '../runner/helpers.js';
import { LINGERING } from '../runner/playbooks.js';

const held = (onConflict: string, wait = '300ms', limit = 1) =>
  playbook(`
version: 1
name: held-${onConflict}
on: { manual: true }
inputs:
  site: { type: string }
concurrency: { key: '\${{ inputs.site }}', limit: ${limit}, onConflict: ${onConflict} }
steps:
  - id: hold
    wait: ${wait}
  - id: said
    uses: log
    with: { message: '\${{ run.id }} done' }
`);

const lingering = playbook(LINGERING('lingering'));

describe('daemon: concurrency keys and cancels in the run pool', function () {
  this.timeout(20_000);
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let lines: LogLine[];
  let n = 0;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 5 });
    client = clientFor(emu);
  });
  after(async () => {
    await client?.close();
    await emu?.close();
  });
  beforeEach(() => {
    store = memoryStore();
    lines = [];
  });
  afterEach(async () => store.close());

  function poolOf(...playbooks: ReturnType<typeof held>[]): RunPool {
    return new RunPool({
      playbooks: new Map(playbooks.map((p) => [p.name, p])),
      maxRuns: 8,
      services: {
        client,
        store,
        locks: new InProcessDeviceLocks(),
        logger: captureLogger(lines),
        engine: engineSettings(),
        owner: 'test-owner',
      },
    });
  }

  /** A run stored queued, as the matcher or the runs API leaves it, then handed to the pool. */
  function submit(pool: RunPool, name: string, site: string): string {
    const run: RunRecord = {
      id: `run-${++n}-${site}`,
      playbook: name,
      status: 'queued',
      trigger: { type: 'manual' },
      inputs: { site },
      startedAt: new Date().toISOString(),
    };
    store.createRun(run);
    pool.submit(run);
    return run.id;
  }

  const ended = async (ids: string[]) =>
    Promise.all(
      ids.map(async (id) => {
        const r = await store.getRun(id);
        return [r?.status, r?.error ?? null, r?.summary?.steps.map((s) => [s.id, s.status])] as const;
      }),
    );

  /** Waits until `holds` says so, asking every 10 ms. */
  async function until(holds: () => boolean | Promise<boolean>): Promise<void> {
    while (!(await holds())) await new Promise((r) => setTimeout(r, 10));
  }

  const doneOrder = () =>
    lines.filter((l) => / done$/.test(l.message)).map((l) => l.message.replace(/ done$/, ''));

  it('queue: a second run of a key waits for the first, another key does not', async () => {
    const pb = held('queue');
    const pool = poolOf(pb);
    const first = submit(pool, pb.name, 'north');
    const second = submit(pool, pb.name, 'north');
    const other = submit(pool, pb.name, 'south');
    expect(pool.running, 'the first of north and the run of south execute').to.equal(2);
    expect(pool.queued, 'the second of north waits').to.equal(1);
    await pool.idle();
    // south ended with the first north; the second north only after the first.
    expect(doneOrder().indexOf(second)).to.be.greaterThan(doneOrder().indexOf(first));
    expect(doneOrder().indexOf(second)).to.be.greaterThan(doneOrder().indexOf(other));
    const steps = [
      ['hold', 'succeeded'],
      ['said', 'succeeded'],
    ];
    expect(await ended([first, second, other])).to.deep.equal([
      ['succeeded', null, steps],
      ['succeeded', null, steps],
      ['succeeded', null, steps],
    ]);
  });

  it('lists the runs of a playbook accepted and not ended, by trigger: the one executing and the one waiting', async () => {
    const pb = held('queue');
    const pool = poolOf(pb);
    const first = submit(pool, pb.name, 'north');
    const waiting = submit(pool, pb.name, 'north');
    const ids = (playbook: string, trigger?: string) => pool.unfinished(playbook, trigger).map((r) => r.id);
    expect(ids(pb.name)).to.deep.equal([first, waiting]);
    expect(ids(pb.name, 'manual')).to.deep.equal([first, waiting]);
    expect(ids(pb.name, 'schedule'), 'no run of a schedule').to.deep.equal([]);
    expect(ids('another')).to.deep.equal([]);
    await pool.idle();
    expect(ids(pb.name)).to.deep.equal([]);
  });

  it('holds and cancels a run waiting for its key: it ends cancelled at once, the first goes on', async () => {
    const pb = held('queue');
    const pool = poolOf(pb);
    const first = submit(pool, pb.name, 'north');
    const second = submit(pool, pb.name, 'north');
    expect([pool.holds(first), pool.holds(second), pool.holds('no-such-run')]).to.deep.equal([
      true,
      true,
      false,
    ]);
    expect(pool.cancel(second, 'cancelled from the console')).to.equal(true);
    expect([pool.holds(second), pool.queued]).to.deep.equal([false, 0]);
    expect(pool.cancel('no-such-run', 'cancelled from the console')).to.equal(false);
    await pool.idle();
    expect((await ended([first, second])).map(([status, error]) => [status, error])).to.deep.equal([
      ['succeeded', null],
      ['cancelled', 'cancelled from the console'],
    ]);
  });

  it('queue with a limit of 2: two runs of a key execute at once, the third waits for one of them', async () => {
    const pb = held('queue', '300ms', 2);
    const pool = poolOf(pb);
    const ids = [1, 2, 3].map(() => submit(pool, pb.name, 'north'));
    expect([pool.running, pool.queued]).to.deep.equal([2, 1]);
    await pool.idle();
    const order = doneOrder();
    expect(order.indexOf(ids[2] as string)).to.equal(2);
    expect((await ended(ids)).map(([status]) => status)).to.deep.equal([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
  });

  it('skip: a run of a busy key ends cancelled at once, saying why; the first goes on', async () => {
    const pb = held('skip');
    const pool = poolOf(pb);
    const first = submit(pool, pb.name, 'north');
    const second = submit(pool, pb.name, 'north');
    expect(await ended([second])).to.deep.equal([
      ['cancelled', 'skipped: another run of held-skip holds concurrency key "north"', []],
    ]);
    await pool.idle();
    expect(await ended([first])).to.deep.equal([
      [
        'succeeded',
        null,
        [
          ['hold', 'succeeded'],
          ['said', 'succeeded'],
        ],
      ],
    ]);
  });

  it('cancel: a new run of a key cancels the one running, whose step in flight says cancelled', async () => {
    const pb = held('cancel', '10s');
    const pool = poolOf(pb);
    const first = submit(pool, pb.name, 'north');
    // The first is in its wait when the second comes.
    await until(() => lines.some((l) => l.message === 'step started' && l.meta.runId === first));
    const second = submit(pool, pb.name, 'north');
    await until(async () => (await store.getRun(first))?.status === 'cancelled');
    const [firstEnd] = await ended([first]);
    expect(firstEnd).to.deep.equal([
      'cancelled',
      `cancelled by run ${second} (concurrency key "north")`,
      [['hold', 'cancelled']],
    ]);
    expect((await store.getRun(second))?.status, 'the second executes').to.equal('running');
    await pool.stop(0);
  });

  it('cancel: of runs of a key that come together, only the last executes; those between end at once', async () => {
    const pb = held('cancel', '2s');
    const pool = poolOf(pb);
    const [first, second, third] = [1, 2, 3].map(() => submit(pool, pb.name, 'north')) as [
      string,
      string,
      string,
    ];
    await pool.idle();
    // Before, the second waited for the first to end, then executed to its end, superseded as it was.
    expect(await ended([first, second, third])).to.deep.equal([
      ['cancelled', `cancelled by run ${second} (concurrency key "north")`, [['hold', 'cancelled']]],
      ['cancelled', `cancelled by run ${third} (concurrency key "north")`, []],
      [
        'succeeded',
        null,
        [
          ['hold', 'succeeded'],
          ['said', 'succeeded'],
        ],
      ],
    ]);
    expect(doneOrder()).to.deep.equal([third]);
  });

  it('cancel with a limit of 2: a third run of a key cancels the oldest only', async () => {
    const pb = held('cancel', '1s', 2);
    const pool = poolOf(pb);
    const ids = [1, 2, 3].map(() => submit(pool, pb.name, 'north'));
    await pool.idle();
    // Before, the third cancelled both runs executing, and the key ran one run where it allows two.
    expect((await ended(ids)).map(([status, error]) => [status, error])).to.deep.equal([
      ['cancelled', `cancelled by run ${ids[2]} (concurrency key "north")`],
      ['succeeded', null],
      ['succeeded', null],
    ]);
  });

  /** Run `id` ended cancelled by the console, its `finally` step `linger` stopped for `why`. */
  async function endedInFinally(id: string, why: string): Promise<void> {
    expect(await ended([id])).to.deep.equal([
      [
        'cancelled',
        'cancelled from the console',
        [
          ['hold', 'cancelled'],
          ['linger', 'cancelled'],
        ],
      ],
    ]);
    const linger = (await store.getRun(id))?.summary?.steps.find((st) => st.id === 'linger');
    expect(linger?.error).to.equal(why);
  }

  /** Waits until the runner logged `message` for step `step` of run `runId`. */
  const logged = (runId: string, message: string, step: string) =>
    until(() => lines.some((l) => l.message === message && l.meta.runId === runId && l.meta.step === step));

  it("a cancelled run's `finally` runs; cancelled again, its `finally` stops, and the run ends cancelled", async () => {
    const pool = poolOf(lingering);
    const id = submit(pool, lingering.name, 'north');
    await logged(id, 'step started', 'hold');
    expect(pool.cancel(id, 'cancelled from the console')).to.equal(true);
    await logged(id, 'step started', 'linger');
    expect((await store.getRun(id))?.status, 'in its finally').to.equal('running');
    expect(pool.cancel(id, 'cancelled again from the console')).to.equal(true);
    await pool.idle();
    await endedInFinally(id, 'cancelled again from the console');
  });

  it("stopping the pool stops a cancelled run's `finally`: the run ends cancelled, not left to resume", async () => {
    const pool = poolOf(lingering);
    const id = submit(pool, lingering.name, 'north');
    await logged(id, 'step started', 'hold');
    pool.cancel(id, 'cancelled from the console');
    await logged(id, 'step started', 'linger');
    await pool.stop(0);
    await endedInFinally(id, 'stopped: fleetbook is stopping');
  });

  it('a cancel is kept in the store while the `finally` runs, and read back there it does not stop it', async () => {
    const pool = poolOf(lingering);
    const id = submit(pool, lingering.name, 'north');
    await logged(id, 'step started', 'hold');
    pool.cancel(id, 'cancelled from the console');
    await logged(id, 'step started', 'linger');
    // A crash now must not bring the run back to life: the cancel is in the store, as another process's is.
    expect((await store.getRun(id))?.cancelRequested).to.equal('cancelled from the console');
    // The lease renewal reads it back: it is this pool's own, and the `finally` goes on.
    pool.cancelRequested(await store.cancelRequests('test-owner'));
    await new Promise((r) => setTimeout(r, 50));
    expect((await store.getRun(id))?.status).to.equal('running');
    pool.cancel(id, 'cancelled again');
    await pool.idle();
    await endedInFinally(id, 'cancelled again');
  });

  it('a run resumed with a cancel asked before the restart is cancelled before its first step', async () => {
    const pb = playbook(`
version: 1
name: resumed-cancelled
on: { manual: true }
steps:
  - id: act
    uses: log
    with: { message: acted }
finally:
  - id: tidy
    uses: log
    with: { message: tidied }
`);
    const pool = poolOf(pb);
    // As the store has it after a crash: running, held by this owner, a cancel asked.
    const run: RunRecord = {
      id: `run-${++n}-resumed`,
      playbook: pb.name,
      status: 'running',
      owner: 'test-owner',
      trigger: { type: 'manual' },
      inputs: {},
      startedAt: new Date().toISOString(),
    };
    store.createRun(run);
    expect(await store.requestCancel(run.id, 'cancelled from the console')).to.equal(true);
    pool.submit((await store.getRun(run.id)) as RunRecord);
    await pool.idle();
    const ended = await store.getRun(run.id);
    expect([ended?.status, ended?.error]).to.deep.equal(['cancelled', 'cancelled from the console']);
    expect(lines.map((l) => l.message))
      .to.include('tidied')
      .and.not.include('acted');
  });
});
