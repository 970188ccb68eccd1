/**
 * The session logins that may have failed, counted in the store (api/login-count.ts), so that every process on it
 * (a daemon, a cron'd `fleetbook run`, replicas) reads one count per service and user: five consecutive failed
 * logins lock the user, whichever process sent them. Two stores on the same data stand for two processes.
 */
import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import type { LoginUser } from '../../src/api/login-count.js';
import { forEachBackend } from './backends.js';

const T = 1_800_000_000_000;
const ADMIN: LoginUser = { service: 'https://m2m.example/api', username: 'admin' };

forEachBackend('session logins counted across processes', (b) => {
  it('counts the logins of every process on the store, and refuses one past the limit', async () => {
    const a = await b.open();
    const other = await b.reopen(a);
    expect(await a.logins.claim(ADMIN, 'l1', T, 4)).to.equal(undefined);
    await a.logins.settle(ADMIN, 'l1', 'refused', T + 1, 'HTTP 401 UNAUTHORIZED: bad credentials');
    expect(await other.logins.claim(ADMIN, 'l2', T + 2, 4)).to.equal(undefined);
    await other.logins.settle(ADMIN, 'l2', 'lost', T + 3, 'other side closed');
    // One in flight counts: whatever it comes to, it may be a failure.
    expect(await a.logins.claim(ADMIN, 'l3', T + 4, 4)).to.equal(undefined);
    expect(await other.logins.claim(ADMIN, 'l4', T + 5, 4)).to.equal(undefined);
    const refused = await a.logins.claim(ADMIN, 'l5', T + 6, 4);
    expect(refused?.map((r) => [r.id, r.state, r.error ?? null])).to.deep.equal([
      ['l1', 'refused', 'HTTP 401 UNAUTHORIZED: bad credentials'],
      ['l2', 'lost', 'other side closed'],
      ['l3', 'sending', null],
      ['l4', 'sending', null],
    ]);
    // Another user, and the same user on another service, are counted apart.
    expect(await other.logins.claim({ ...ADMIN, username: 'ops' }, 'o1', T + 7, 4)).to.equal(undefined);
    expect(await other.logins.claim({ ...ADMIN, service: 'http://127.0.0.1:8080/api' }, 's1', T, 4)).to.equal(
      undefined,
    );
    expect((await a.logins.list()).length).to.equal(6);
  });

  it('a login that succeeds clears those sent before it that ended, not those sent after it', async () => {
    const a = await b.open();
    const other = await b.reopen(a);
    for (const [id, at] of [
      ['before', T],
      ['mine', T + 10],
    ] as const)
      expect(await a.logins.claim(ADMIN, id, at, 4)).to.equal(undefined);
    await a.logins.settle(ADMIN, 'before', 'refused', T + 5, 'HTTP 401');
    // Sent after the success by another process, still in flight: the service may count it after the success.
    expect(await other.logins.claim(ADMIN, 'after', T + 20, 4)).to.equal(undefined);
    await a.logins.settle(ADMIN, 'mine', 'succeeded', T + 30);
    expect((await other.logins.list()).map((r) => r.id)).to.deep.equal(['after']);
    await other.logins.settle(ADMIN, 'after', 'lost', T + 40, 'other side closed');
    expect((await a.logins.list()).map((r) => [r.id, r.state])).to.deep.equal([['after', 'lost']]);
  });

  it('a login that succeeds clears one sent before it whose process went without its answer', async () => {
    const a = await b.open();
    for (const [id, at] of [
      ['killed', T],
      ['waiting', T + 5],
      ['mine', T + 10],
    ] as const)
      expect(await a.logins.claim(ADMIN, id, at, 4)).to.equal(undefined);
    // `killed` was sent by a process of this host that is gone (a daemon killed with its login in flight):
    // whatever it came to, it reached the service before `mine`, sent after it, or never.
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    await b.query(a, `UPDATE session_logins SET pid = ${gone} WHERE id = 'killed' RETURNING id`);
    await a.logins.settle(ADMIN, 'mine', 'succeeded', T + 30);
    // `waiting`'s process is alive (this one): its answer may still be a refusal the service counts after.
    expect((await a.logins.list()).map((r) => [r.id, r.state])).to.deep.equal([['waiting', 'sending']]);
  });

  it('a login the service did not act on leaves the count as it was; clear forgets a user', async () => {
    const a = await b.open();
    expect(await a.logins.claim(ADMIN, 'busy', T, 4)).to.equal(undefined);
    await a.logins.settle(ADMIN, 'busy', 'not-acted', T + 1);
    expect(await a.logins.list()).to.deep.equal([]);
    for (const id of ['x1', 'x2']) {
      await a.logins.claim(ADMIN, id, T + 2, 4);
      await a.logins.settle(ADMIN, id, 'refused', T + 3, 'HTTP 401');
    }
    await a.logins.claim({ ...ADMIN, username: 'ops' }, 'o1', T + 4, 4);
    const other = await b.reopen(a);
    expect((await other.logins.clear('admin')).map((r) => r.id)).to.deep.equal(['x1', 'x2']);
    expect((await a.logins.list()).map((r) => r.username)).to.deep.equal(['ops']);
    // A login in flight as the count was cleared, and refused after: a failure after the clear, counted.
    await a.logins.claim(ADMIN, 'y1', T + 5, 4);
    await other.logins.clear('admin');
    await a.logins.settle(ADMIN, 'y1', 'refused', T + 6, 'HTTP 401');
    expect((await a.logins.list()).filter((r) => r.username === 'admin').map((r) => r.id)).to.deep.equal([
      'y1',
    ]);
  });

  it('clear with a service forgets the user on that service only', async () => {
    const a = await b.open();
    const staging: LoginUser = { ...ADMIN, service: 'http://127.0.0.1:8080/api' };
    for (const [user, id] of [
      [ADMIN, 'p1'],
      [staging, 's1'],
      [staging, 's2'],
      [{ ...staging, username: 'ops' }, 'o1'],
    ] as const) {
      await a.logins.claim(user, id, T, 4);
      await a.logins.settle(user, id, 'refused', T + 1, 'HTTP 401');
    }
    const other = await b.reopen(a);
    expect((await other.logins.clear('admin', staging.service)).map((r) => r.id)).to.deep.equal(['s1', 's2']);
    expect((await a.logins.list()).map((r) => r.id).sort()).to.deep.equal(['o1', 'p1']);
    expect(await other.logins.clear('admin', 'https://nowhere.example/api')).to.deep.equal([]);
    expect((await a.logins.list()).length).to.equal(2);
  });
});
