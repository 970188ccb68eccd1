/**
 * `fleetbook runs show ID` of a run asked to cancel says what will happen to it, by what the store tells: the live
 * process that holds it cancels it at a lease renewal; one no live process holds (its holder died) is cancelled
 * by the `fleetbook serve` that takes it up, before it runs another step; one that has ended says no more.
 * Child processes on a state file written here (dist/ must be built; `npm test` builds it).
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';
import { expect } from 'chai';
import { BOOT } from '../../src/store/lease.js';
import { emptyCounts, type OwnerInfo, type RunRecord } from '../../src/store/store.js';
import { fleetbook, stateFile } from '../helpers/cli.js';

const STARTED = '2026-11-22T00:05:00.000Z';
const REASON = 'cancelled from the console';

describe('fleetbook runs show of a run asked to cancel (child process)', function () {
  this.timeout(30_000);
  const { env, withStore } = stateFile(undefined, { each: true });

  /** A run of `owner` (registered, its lease until `leaseUntil`), asked to cancel. */
  async function askedRun(
    owner: Omit<OwnerInfo, 'startedAt'> | undefined,
    leaseUntil: number,
    ...others: OwnerInfo[]
  ): Promise<string> {
    const id = 'eeee1111-0000-4000-8000-000000000001';
    await withStore(async (store) => {
      for (const o of [...(owner ? [{ ...owner, startedAt: STARTED }] : []), ...others])
        await store.registerOwner(o, leaseUntil - 60_000, 60_000, false);
      store.createRun({
        id,
        ...(owner ? { owner: owner.id } : {}),
        playbook: 'suspend-on-overuse',
        status: 'running',
        trigger: { type: 'manual' },
        inputs: {},
        startedAt: STARTED,
      } satisfies RunRecord);
      expect(await store.requestCancel(id, REASON)).to.equal(true);
    });
    return id;
  }

  async function show(id: string): Promise<string> {
    const r = await fleetbook(['runs', 'show', id], env);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    return r.stdout;
  }

  const elsewhere = (id: string, role: OwnerInfo['role']) => ({
    id,
    role,
    pid: 4242,
    host: 'elsewhere',
    boot: '',
  });
  const orphaned = (id: string) =>
    `run ${id}: running\n` +
    `cancel requested (${REASON}): no live process holds the run; the next \`fleetbook serve\` on this state cancels it before it runs another step, and its finally steps run there. ` +
    `To end it now without its finally steps: fleetbook runs cancel ${id}\n`;

  it('held by a live process: that process cancels it by its next lease renewal', async () => {
    const id = await askedRun(elsewhere('holder', 'daemon'), Date.now() + 600_000);
    expect(await show(id)).to.equal(
      `run ${id}: running\n` +
        `cancel requested (${REASON}): \`fleetbook serve\` (pid 4242 on elsewhere, since ${STARTED}), which holds the run, ` +
        'cancels it by its next lease renewal (within a third of FLEETBOOK_LEASE); its finally steps run there\n',
    );
  });

  it('held by a process whose lease expired: the next `fleetbook serve` cancels it before its next step', async () => {
    const id = await askedRun(elsewhere('gone', 'run'), Date.now() - 60_000);
    expect(await show(id)).to.equal(orphaned(id));
  });

  it('held by a process of this host that is gone, its lease not yet expired: the same', async () => {
    // A pid that was this host's and is no more: a child that has exited.
    const child = execFile(process.execPath, ['-e', '']);
    await once(child, 'exit');
    const id = await askedRun(
      { id: 'killed', role: 'run', pid: child.pid as number, host: hostname(), boot: BOOT },
      Date.now() + 600_000,
    );
    expect(await show(id)).to.equal(orphaned(id));
  });

  it('held by no live process while a `fleetbook serve` is live on the state: that one takes it up', async () => {
    const id = await askedRun(elsewhere('gone', 'run'), Date.now() - 60_000);
    await withStore((store) =>
      store.registerOwner(
        { ...elsewhere('daemon', 'daemon'), startedAt: STARTED },
        Date.now(),
        600_000,
        false,
      ),
    );
    expect(await show(id)).to.equal(
      `run ${id}: running\n` +
        `cancel requested (${REASON}): no live process holds the run; a live \`fleetbook serve\` on this state takes it up at its next lease renewal ` +
        'and cancels it before it runs another step; its finally steps run there\n',
    );
  });

  it('ended: no cancel is said to be pending', async () => {
    const id = await askedRun(elsewhere('holder', 'daemon'), Date.now() + 600_000);
    const endedAt = '2026-11-22T00:06:00.000Z';
    await withStore((store) =>
      store.updateRun(id, {
        status: 'cancelled',
        endedAt,
        error: REASON,
        summary: {
          runId: id,
          playbook: 'suspend-on-overuse',
          status: 'cancelled',
          startedAt: STARTED,
          endedAt,
          error: REASON,
          steps: [],
          devices: emptyCounts(),
        },
      }),
    );
    expect(await show(id)).to.equal(`run ${id} of suspend-on-overuse: cancelled\n  error: ${REASON}\n`);
  });
});
