/**
 * The matcher takes the events a group commit has just stored from memory, not by reading them back from the
 * inbox and parsing them again: but only an event whose id is the next one to process. Events stored while it
 * was behind (the run queue full, more than it holds), or before a crash, are read from the store, in order,
 * and every event is processed exactly once, those claimed from a gone owner too.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { GroupCommit } from '../../src/daemon/callbacks.js';
import { Matcher } from '../../src/daemon/matcher.js';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import type { RunPool } from '../../src/daemon/pool.js';
import { silentLogger } from '../../src/log.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import type { Playbook } from '../../src/playbook/schema.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { InboxMessage, RunRecord } from '../../src/store/store.js';
import { until } from '../helpers/browser.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = loadPlaybook(`version: 1
name: every-usage-alert
on:
  callback:
    service: DeviceUsage
steps:
  - id: note
    uses: log
    with: { message: 'an alert' }
`).playbook as Playbook;

const message = (i: number): InboxMessage => ({
  service: 'DeviceUsage',
  kind: 'alertServiceResponse',
  requestId: `req-${i}`,
  payload: { requestId: `req-${i}`, deviceResponse: { alertServiceResponse: { n: i, nested: [{ a: i }] } } },
  receivedAt: new Date(1_700_000_000_000 + i).toISOString(),
});

/** A pool that only records the runs it is given; `queued` says how full it pretends to be. */
class RecordingPool {
  readonly runs: RunRecord[] = [];
  queued = 0;
  submit(run: RunRecord): void {
    this.runs.push(run);
  }
}

/** The lease of the daemon the tests' matcher and group commit are parts of. */
const OWNER = 'matcher-test';

/**
 * A matcher and a group commit wired as `fleetbook serve` wires them, both under the lease `owner`, counting the
 * matcher's reads.
 */
function daemonParts(store: SqliteStore, owner = OWNER) {
  const pool = new RecordingPool();
  const metrics = new DaemonMetrics({ backlog: () => 0, running: () => 0, client: () => undefined });
  const matcher = new Matcher({
    store,
    playbooks: new Map([[PLAYBOOK.name, PLAYBOOK]]),
    pool: pool as unknown as RunPool,
    log: silentLogger,
    metrics,
    owner,
  });
  const commits = new GroupCommit(store, owner, (stored) => {
    matcher.offer(stored);
    matcher.kick();
  });
  const reads = { n: 0 };
  const pendingInbox = store.pendingInbox.bind(store);
  store.pendingInbox = (who, limit, afterId) => {
    reads.n++;
    return pendingInbox(who, limit, afterId);
  };
  return { pool, matcher, commits, reads };
}

/** The requestIds of the runs' events, in the order the runs were started. */
const requestsOf = (runs: RunRecord[]) => runs.map((r) => (r.trigger as { requestId: string }).requestId);

/** Events stored and still unprocessed. */
const pending = (store: SqliteStore) =>
  (store.db.prepare('SELECT count(*) AS n FROM inbox WHERE processed_at IS NULL').get() as { n: number }).n;

const settle = async (matcher: Matcher) => {
  for (let i = 0; i < 5; i++) {
    await matcher.idle();
    await new Promise((r) => setImmediate(r));
  }
};

describe('the matcher takes just-committed events from memory', function () {
  this.timeout(30_000);

  it('matches events handed over at their commit without reading them back from the inbox', async () => {
    const store = new SqliteStore(':memory:');
    const { pool, matcher, commits, reads } = daemonParts(store);
    // The first commit: the matcher, which has processed nothing yet, reads the store once to learn where it is.
    await commits.add(message(0));
    await settle(matcher);
    const before = reads.n;
    for (let round = 1; round <= 5; round++) {
      await Promise.all([1, 2, 3].map((k) => commits.add(message(round * 10 + k))));
      await settle(matcher);
    }
    expect(reads.n - before, 'reads of the inbox after the first commit').to.equal(0);
    expect(pool.runs).to.have.length(16);
    expect(pending(store)).to.equal(0);
    // The run's event is the payload as the inbox stores it, whichever way it came.
    const stored = (await store.inboxByRequest(['req-23']))[0];
    const run = pool.runs.find((r) => (r.trigger as { requestId: string }).requestId === 'req-23');
    expect(run?.event).to.deep.equal(stored?.payload);
    expect(run?.trigger).to.deep.include({ inboxId: stored?.id });
    expect((await store.getRun(run?.id as string))?.event).to.deep.equal(stored?.payload);
  });

  it('reads from the store the events stored while it was behind, in order, each once', async () => {
    const store = new SqliteStore(':memory:');
    const { pool, matcher, commits, reads } = daemonParts(store);
    await commits.add(message(0));
    await settle(matcher);
    // Stored without the matcher hearing of them (as a commit it missed): it must not skip to the next one
    // it is handed.
    await store.appendInbox(OWNER, [message(1), message(2)]);
    await commits.add(message(3));
    await settle(matcher);
    expect(requestsOf(pool.runs)).to.deep.equal(['req-0', 'req-1', 'req-2', 'req-3']);
    // The run queue full: the matcher waits, and more commits come than it holds.
    pool.queued = 5000;
    for (let i = 4; i < 454; i += 10)
      await Promise.all(Array.from({ length: 10 }, (_, k) => commits.add(message(i + k))));
    expect(pool.runs).to.have.length(4);
    // The queue drains: nothing kicks the matcher (no commit comes), its pause ends by itself.
    pool.queued = 0;
    const readsBefore = reads.n;
    await until(
      'the matcher to resume by itself',
      async () => (pool.runs.length === 454 ? true : undefined),
      10_000,
      10,
    );
    await settle(matcher);
    expect(requestsOf(pool.runs)).to.deep.equal(Array.from({ length: 454 }, (_, i) => `req-${i}`));
    expect(reads.n, 'what it did not hold is read from the store').to.be.greaterThan(readsBefore);
    expect(pending(store)).to.equal(0);
    // Caught up, it takes the next commits from memory again.
    const caughtUp = reads.n;
    for (let i = 454; i < 460; i++) await commits.add(message(i));
    await settle(matcher);
    expect(pool.runs).to.have.length(460);
    expect(reads.n).to.equal(caughtUp);
  });

  it('processes after a restart the events stored and acknowledged before a crash, once', async () => {
    const tmp = tempDir('fleetbook-matcher-held-events-');
    const file = join(tmp, 'state.db');
    const first = new SqliteStore(file);
    // The crash: stored and synced (acknowledged) by the first daemon, and its matcher never got to them.
    const crashed = new GroupCommit(first, 'first daemon', () => undefined);
    await Promise.all([0, 1, 2].map((i) => crashed.add(message(i))));
    const a = daemonParts(first, 'first daemon');
    await a.commits.add(message(3));
    await settle(a.matcher);
    expect(requestsOf(a.pool.runs)).to.deep.equal(['req-0', 'req-1', 'req-2', 'req-3']);
    // A crash between the commit of events 4-5 and their match.
    await Promise.all([4, 5].map((i) => crashed.add(message(i))));
    first.db.close();

    const second = new SqliteStore(file);
    const b = daemonParts(second, 'second daemon');
    // The restarted daemon holds a lease of its own: it claims the messages the gone one left, as it does at start.
    expect(await b.matcher.claimOrphans()).to.equal(2);
    await settle(b.matcher);
    expect(requestsOf(b.pool.runs)).to.deep.equal(['req-4', 'req-5']);
    // Handed an event it already processed (a commit heard twice), it starts nothing again.
    b.matcher.offer(await second.inboxByRequest(['req-5']));
    b.matcher.kick();
    await b.commits.add(message(6));
    await settle(b.matcher);
    expect(requestsOf(b.pool.runs)).to.deep.equal(['req-4', 'req-5', 'req-6']);
    expect(pending(second)).to.equal(0);
    const runs = second.db.prepare('SELECT count(*) AS n FROM runs').get() as { n: number };
    expect(runs.n).to.equal(7);
    second.db.close();
  });

  it('processes the callbacks it claims from a gone owner while a commit of its own is in flight', async () => {
    // Measured before: the claim set the matcher back to the first id, and the commit in flight set it past the
    // claimed messages, whose ids are lower: they stayed in the inbox until another claim.
    const store = new SqliteStore(':memory:');
    const lease = { role: 'daemon' as const, pid: process.pid, host: 'here', boot: '', startedAt: '' };
    await store.registerOwner({ id: OWNER, ...lease }, Date.now(), 60_000, false);
    const { pool, matcher, commits } = daemonParts(store);
    // A replica that died with three callbacks stored and not processed: no live owner holds them.
    await store.appendInbox('killed replica', [message(1), message(2), message(3)]);
    matcher.kick();
    await settle(matcher);
    // The commit of this daemon's own next callback is held in flight...
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let committing!: () => void;
    const inCommit = new Promise<void>((r) => (committing = r));
    const complete = store.completeInbox.bind(store);
    store.completeInbox = async (processed) => {
      committing();
      await held;
      return complete(processed);
    };
    await commits.add(message(4));
    await inCommit;
    // ...when the lease renewal claims the dead replica's callbacks, as the daemon does.
    expect(await matcher.claimOrphans()).to.equal(3);
    release();
    await settle(matcher);
    expect(requestsOf(pool.runs).sort()).to.deep.equal(['req-1', 'req-2', 'req-3', 'req-4']);
    expect(pending(store)).to.equal(0);
  });

  it('processes the events of a commit made while a read of the store was in flight, not held, at once', async () => {
    // Measured before (P4-PG3, three replicas): a read of the store that began before a commit said, on its
    // return, that nothing more was pending, over the commit's events that were not held; they stayed in the
    // inbox until another commit came. At the end of a burst, that is never.
    const store = new SqliteStore(':memory:');
    const { pool, matcher } = daemonParts(store);
    await store.appendInbox(OWNER, [message(1)]);
    // The first read of the store (the matcher starts behind) is held in flight, its answer already read.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let reading!: () => void;
    const inRead = new Promise<void>((r) => (reading = r));
    const read = store.pendingInbox.bind(store);
    store.pendingInbox = async (who, limit, afterId) => {
      const rows = await read(who, limit, afterId);
      reading();
      await held;
      return rows;
    };
    matcher.kick();
    await inRead;
    // Meanwhile two commits of this daemon, with another replica's between them: the first is held, the
    // second's id does not follow it, and is not.
    const [two] = (await store.appendInbox(OWNER, [message(2)])) as number[];
    matcher.offer(await store.inboxByRequest(['req-2']));
    await store.appendInbox('another replica', [message(3)]);
    const [four] = (await store.appendInbox(OWNER, [message(4)])) as number[];
    expect(four).to.equal((two as number) + 2);
    matcher.offer(await store.inboxByRequest(['req-4']));
    matcher.kick();
    release();
    await settle(matcher);
    expect(requestsOf(pool.runs)).to.deep.equal(['req-1', 'req-2', 'req-4']);
    expect(pending(store), "the other replica's event stays its own").to.equal(1);
  });
});
