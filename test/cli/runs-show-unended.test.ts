/**
 * `fleetbook runs show ID --json` of a run not ended gives what `GET /runs/{id}` gives (docs/cli.md,
 * docs/daemon.md): `{ runId, playbook, version?, status, startedAt, trigger, dryRun?, owner?, steps?, planned? }`.
 * It printed the stored record instead (`id`, its inputs, its event), built apart from the daemon's answer and
 * from the text `runs show` prints. Child processes on a state file (dist/ must be built; `npm test` builds it).
 */
import { expect } from 'chai';
import { fleetbook, stateFile } from '../helpers/cli.js';

const QUEUED = 'dddd1111-0000-4000-8000-000000000001';
const BARE = 'dddd2222-0000-4000-8000-000000000002';
const STARTED = '2026-11-30T19:04:32.932Z';
const DEFINITION = {
  version: 1,
  name: 'pause-fleet',
  on: { manual: true },
  steps: [
    { id: 'look', uses: 'devices.list', with: { accountName: '0000123456-00001' } },
    { id: 'note', uses: 'log', with: { message: 'hi' } },
  ],
};

describe('fleetbook runs show --json: a run not ended as GET /runs/{id} gives it (child process)', function () {
  this.timeout(60_000);
  const { env } = stateFile(async (store) => {
    await store.savePlaybookVersion('v1', JSON.stringify(DEFINITION));
    store.createRun({
      id: QUEUED,
      playbook: 'pause-fleet',
      version: 'v1',
      status: 'queued',
      trigger: { type: 'manual', by: 'cli' },
      inputs: { note: 'kept apart' },
      startedAt: STARTED,
      dryRun: true,
    });
    store.createRun({
      id: BARE,
      playbook: 'pause-fleet',
      status: 'running',
      trigger: { type: 'manual', by: 'cli' },
      inputs: {},
      startedAt: STARTED,
    });
  });

  const show = async (...args: string[]) => {
    const r = await fleetbook(['runs', 'show', ...args], env);
    expect(r.code, r.stderr).to.equal(0);
    return r.stdout;
  };

  it('a queued dry run: its steps pending, its planned calls so far, nothing of its record besides', async () => {
    const shown = JSON.parse(await show(QUEUED, '--json')) as Record<string, unknown>;
    expect(Object.keys(shown)).to.deep.equal([
      'runId',
      'playbook',
      'version',
      'status',
      'startedAt',
      'trigger',
      'dryRun',
      'steps',
      'planned',
    ]);
    expect(shown).to.deep.include({
      runId: QUEUED,
      playbook: 'pause-fleet',
      version: 'v1',
      status: 'queued',
      startedAt: STARTED,
      trigger: { type: 'manual', by: 'cli' },
      dryRun: true,
      planned: [],
    });
    expect((shown.steps as { id: string; status: string }[]).map((s) => [s.id, s.status])).to.deep.equal([
      ['look', 'pending'],
      ['note', 'pending'],
    ]);
    // The text says the same run.
    const text = await show(QUEUED);
    expect(text.split('\n')[0]).to.equal(`run ${QUEUED} of pause-fleet: queued (dry run)`);
    expect(text).to.include('  version: v1');
  });

  it('a run whose version the store does not keep: what it is, no steps', async () => {
    expect(JSON.parse(await show(BARE, '--json'))).to.deep.equal({
      runId: BARE,
      playbook: 'pause-fleet',
      status: 'running',
      startedAt: STARTED,
      trigger: { type: 'manual', by: 'cli' },
    });
    // No process holds it, and `runs resume` has no version of its playbook to go on with.
    expect(await show(BARE)).to.equal(
      `run ${BARE}: running\nno process holds this run (the process that ran it stopped): a \`fleetbook serve\` that loads playbook pause-fleet takes it up; \`fleetbook runs cancel ${BARE}\` ends it\n`,
    );
  });

  it('`runs resume` refuses a run whose version the store does not keep, saying who can take it up', async () => {
    const r = await fleetbook(['runs', 'resume', BARE], env);
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([
      1,
      '',
      `fleetbook: run ${BARE} of pause-fleet has no playbook version in the store to resume with (it is older than the versions fleetbook keeps): \`fleetbook serve\` with pause-fleet loaded takes it up, or \`fleetbook runs cancel ${BARE}\` ends it\n`,
    ]);
  });
});
