/**
 * `fleetbook runs list` says which process holds each unfinished run: with several on one store (replicas, a
 * `fleetbook run` beside `serve`) its table named none, only `--json` its owner's id. Child processes of the
 * built CLI (dist/ must be built) on a state file written here, its owners registered as other processes.
 */
import { expect } from 'chai';
import type { OwnerInfo, RunRecord, RunStatus } from '../../src/store/store.js';
import { fleetbook, stateFile } from '../helpers/cli.js';

const HOUR = 3_600_000;
/** Processes of other hosts (another boot): live while their lease holds. */
const SERVE: OwnerInfo = {
  id: 'owner-serve',
  role: 'daemon',
  pid: 4242,
  host: 'host-a',
  boot: 'another boot',
  startedAt: '2026-11-22T00:00:00.000Z',
};
const RUN: OwnerInfo = { ...SERVE, id: 'owner-run', role: 'run', pid: 99, host: 'host-b' };
const GONE: OwnerInfo = { ...SERVE, id: 'owner-gone', pid: 7, host: 'host-c' };

/** [id, status, owner]: newest last. */
const RUNS: [string, RunStatus, string][] = [
  ['run-ended', 'succeeded', SERVE.id],
  ['run-of-gone', 'running', GONE.id],
  ['run-queued', 'queued', SERVE.id],
  ['run-cli', 'running', RUN.id],
  ['run-serve', 'running', SERVE.id],
];

describe('fleetbook runs list: the owner of each run (child process)', function () {
  this.timeout(30_000);
  const { env } = stateFile(async (store) => {
    const now = Date.now();
    await store.registerOwner(GONE, now - 2 * HOUR, 1000, false);
    await store.registerOwner(SERVE, now, HOUR, false);
    await store.registerOwner(RUN, now, HOUR, false);
    RUNS.forEach(([id, status, owner], i) =>
      store.createRun({
        id,
        owner,
        playbook: 'nightly',
        status,
        trigger: { type: 'manual' },
        inputs: {},
        startedAt: `2026-11-22T00:0${i}:00.000Z`,
        ...(status === 'succeeded' ? { endedAt: `2026-11-22T00:0${i}:30.000Z` } : {}),
      } satisfies RunRecord),
    );
  });

  it('names the role, pid and host of the live process that holds an unfinished run', async () => {
    const r = await fleetbook(['runs', 'list'], env);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(r.stdout.split('\n')).to.deep.equal([
      'RUN ID       STARTED                   STATUS     TRIGGER  PLAYBOOK  OWNER',
      'run-serve    2026-11-22T00:04:00.000Z  running    manual   nightly   serve pid 4242 on host-a',
      'run-cli      2026-11-22T00:03:00.000Z  running    manual   nightly   run pid 99 on host-b',
      'run-queued   2026-11-22T00:02:00.000Z  queued     manual   nightly   serve pid 4242 on host-a',
      'run-of-gone  2026-11-22T00:01:00.000Z  running    manual   nightly   none',
      'run-ended    2026-11-22T00:00:00.000Z  succeeded  manual   nightly   -',
      '',
    ]);
  });

  it('--json keeps the owner id of each run, which the table resolves', async () => {
    const r = await fleetbook(['runs', 'list', '--json'], env);
    expect((JSON.parse(r.stdout) as RunRecord[]).map((run) => [run.id, run.owner])).to.deep.equal(
      RUNS.map(([id, , owner]) => [id, owner]).reverse(),
    );
  });
});
