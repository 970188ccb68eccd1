/**
 * The callbacks a daemon claims from a gone owner (a replica killed, a crashed daemon's lease expired) are
 * processed even when the claim lands while the matcher is busy with its own. Measured before: the claim's
 * `rescan` set the matcher back to the first id while a read or a commit was in flight, and that commit set it
 * forward again past the claimed messages, whose ids are lower: they stayed in the inbox, unprocessed, until
 * another claim.
 */
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
  payload: { requestId: `req-${i}` },
  receivedAt: new Date(1_700_000_000_000 + i).toISOString(),
});

const ME = 'live replica';

describe('the matcher takes up the callbacks claimed from a gone owner', () => {
  it('processes them when the claim lands during its own commit', async () => {
    const store = new SqliteStore(':memory:');
    const runs: RunRecord[] = [];
    const pool = { queued: 0, submit: (r: RunRecord) => runs.push(r) } as unknown as RunPool;
    const matcher = new Matcher({
      store,
      playbooks: new Map([[PLAYBOOK.name, PLAYBOOK]]),
      pool,
      log: silentLogger,
      metrics: new DaemonMetrics({ backlog: () => 0, running: () => 0, client: () => undefined }),
      owner: ME,
    });
    const lease = { role: 'daemon' as const, pid: process.pid, host: 'here', boot: '', startedAt: '' };
    await store.registerOwner({ id: ME, ...lease }, Date.now(), 60_000, false);
    // A replica that died with three callbacks stored and not processed: no live owner holds them.
    await store.appendInbox('killed replica', [message(1), message(2), message(3)]);
    // Up to date, the matcher knows it has nothing of its own left: it takes the next commits from memory.
    matcher.kick();
    await matcher.idle();
    // Its own callback's commit is held in flight...
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const complete = store.completeInbox.bind(store);
    let committing!: () => void;
    const inCommit = new Promise<void>((r) => (committing = r));
    store.completeInbox = async (processed) => {
      committing();
      await held;
      return complete(processed);
    };
    const commits = new GroupCommit(store, ME, (stored) => {
      matcher.offer(stored);
      matcher.kick();
    });
    await commits.add(message(4));
    await inCommit;
    // ...when the renewal claims the dead replica's callbacks, as the daemon does.
    expect(await store.claimInbox(ME, Date.now())).to.equal(3);
    matcher.rescan();
    release();
    for (let i = 0; i < 5; i++) {
      await matcher.idle();
      await new Promise((r) => setImmediate(r));
    }
    const requests = runs.map((r) => (r.trigger as { requestId: string }).requestId);
    expect(requests.sort()).to.deep.equal(['req-1', 'req-2', 'req-3', 'req-4']);
    expect(
      (store.db.prepare('SELECT count(*) AS n FROM inbox WHERE processed_at IS NULL').get() as { n: number })
        .n,
    ).to.equal(0);
  });
});
