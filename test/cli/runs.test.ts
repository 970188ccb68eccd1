/**
 * `fleetbook runs list` filters (`--limit`, `--playbook`, `--status`) and its table's header, and `runs show`
 * by an id prefix: child processes on a state file written here (dist/ must be built; `npm test` builds it).
 */
import { expect } from 'chai';
import type { RunRecord, RunStatus, RunSummary } from '../../src/store/store.js';
import { fleetbook, runOfGoneProcess, stateFile } from '../helpers/cli.js';

/** [id, playbook, status, minute of its start, trigger]: newest last. */
const RUNS: [string, string, RunStatus, number, Record<string, unknown>][] = [
  ['aaaa1111-0000-4000-8000-000000000001', 'nightly', 'succeeded', 1, { type: 'manual', by: 'cli' }],
  [
    'aaaa2222-0000-4000-8000-000000000002',
    'nightly',
    'failed',
    2,
    { type: 'schedule', reason: 'missed', scheduledAt: '2026-11-20T07:00:00.000Z' },
  ],
  [
    'bbbb1111-0000-4000-8000-000000000003',
    'suspend-on-overuse',
    'succeeded',
    3,
    { type: 'callback', service: 'DeviceUsage' },
  ],
  [
    'cccc1111-0000-4000-8000-000000000004',
    'nightly',
    'succeeded',
    4,
    { type: 'schedule', reason: 'schedule' },
  ],
];

const started = (minute: number) => `2026-11-22T00:0${minute}:00.000Z`;

describe('fleetbook runs list and show (child process)', function () {
  this.timeout(30_000);
  const { env, withStore } = stateFile((store) => {
    for (const [id, playbook, status, minute, trigger] of RUNS)
      store.createRun({
        id,
        playbook,
        status,
        trigger,
        inputs: {},
        startedAt: started(minute),
        endedAt: started(minute),
      } satisfies RunRecord);
  });

  const list = async (...args: string[]) => {
    const r = await fleetbook(['runs', 'list', ...args], env);
    expect(r.stderr).to.equal('');
    expect(r.code).to.equal(0);
    return r.stdout;
  };
  const idsOf = (json: string) => (JSON.parse(json) as RunRecord[]).map((r) => r.id);

  it('prints a header above its columns, newest first, with what started each run', async () => {
    const lines = (await list()).split('\n');
    expect(lines[0]).to.match(/^RUN ID {32}STARTED {19}STATUS {5}TRIGGER {36}PLAYBOOK {12}OWNER$/);
    // A run made up (or backfilled) says which fire it was for: it started days later.
    expect(lines.slice(1)).to.deep.equal([
      `${RUNS[3]![0]}  ${started(4)}  succeeded  schedule                                   nightly             -`,
      `${RUNS[2]![0]}  ${started(3)}  succeeded  callback DeviceUsage                       suspend-on-overuse  -`,
      `${RUNS[1]![0]}  ${started(2)}  failed     schedule, missed for 2026-11-20T07:00:00Z  nightly             -`,
      `${RUNS[0]![0]}  ${started(1)}  succeeded  manual                                     nightly             -`,
      '',
    ]);
  });

  it('--json stays a JSON list, without a header', async () => {
    expect(idsOf(await list('--json'))).to.deep.equal(RUNS.map((r) => r[0]).reverse());
  });

  it('--limit, --playbook and --status filter, alone and together', async () => {
    expect(idsOf(await list('--json', '--limit', '2'))).to.deep.equal([RUNS[3]![0], RUNS[2]![0]]);
    expect(idsOf(await list('--json', '--playbook', 'nightly'))).to.deep.equal([
      RUNS[3]![0],
      RUNS[1]![0],
      RUNS[0]![0],
    ]);
    expect(idsOf(await list('--json', '--status', 'failed'))).to.deep.equal([RUNS[1]![0]]);
    expect(
      idsOf(await list('--json', '--playbook', 'nightly', '--status', 'succeeded', '--limit', '1')),
    ).to.deep.equal([RUNS[3]![0]]);
  });

  it('says so when no run matches, and of a playbook name no run has, what the name is', async () => {
    expect(await list('--playbook', 'no-such-playbook')).to.equal(
      'no runs of playbook "no-such-playbook": the store has no run of a playbook of that name (the name is the playbook\'s `name:`, not its file\'s)\n',
    );
    expect(await list('--playbook', 'nightly', '--status', 'cancelled')).to.equal(
      'no cancelled runs of playbook "nightly"\n',
    );
    expect(await list('--status', 'cancelled')).to.equal('no cancelled runs\n');
  });

  it('refuses a --limit that is not a whole number from 1 to 1000, and an unknown --status', async () => {
    for (const limit of ['0', '-1', '2.5', 'ten', '1001']) {
      const r = await fleetbook(['runs', 'list', '--limit', limit], env);
      expect(r.code, limit).to.equal(2);
      expect(r.stderr, limit).to.contain('--limit must be a whole number from 1 to 1000');
    }
    const r = await fleetbook(['runs', 'list', '--status', 'done'], env);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.contain(
      '--status must be one of queued, running, succeeded, failed, cancelled (got "done")',
    );
  });

  it('refuses an empty --playbook, as the HTTP API refuses ?playbook=, rather than list no runs', async () => {
    for (const name of ['', ' ']) {
      const r = await fleetbook(['runs', 'list', '--playbook', name], env);
      expect([r.code, r.stdout, r.stderr]).to.deep.equal([
        2,
        '',
        `fleetbook: --playbook is empty (got ${JSON.stringify(name)}): give a playbook name, or leave it out\n`,
      ]);
    }
  });

  it('warns of a FLEETBOOK_ variable it does not read, naming the one meant, and lists as asked', async () => {
    const r = await fleetbook(['runs', 'list', '--limit', '1'], {
      ...env,
      FLEETBOOK_STAT: 'elsewhere.db',
      FLEETBOOK_SECRET_TEAM_WEBHOOK: 'a playbook secret, read by its playbooks',
    });
    expect(r.code).to.equal(0);
    expect(r.stderr).to.equal(
      'fleetbook: warning: FLEETBOOK_STAT is set, but fleetbook reads no such variable (did you mean FLEETBOOK_STATE?)\n',
    );
    expect(r.stdout.split('\n')).to.have.length(3);
  });

  it('show takes a whole id, or a prefix of one run only', async () => {
    for (const id of [RUNS[2]![0], 'bbbb', 'b', 'cccc1111-0']) {
      const r = await fleetbook(['runs', 'show', id, '--json'], env);
      expect(r.stderr, id).to.equal('');
      expect(r.code, id).to.equal(0);
      expect((JSON.parse(r.stdout) as { runId: string }).runId, id).to.equal(
        id.startsWith('b') ? RUNS[2]![0] : RUNS[3]![0],
      );
    }
  });

  it('show of an ambiguous prefix names the runs it matches', async () => {
    const r = await fleetbook(['runs', 'show', 'aaaa'], env);
    expect(r.stdout).to.equal('');
    expect(r.code).to.equal(2);
    expect(r.stderr).to.equal(
      `fleetbook: run id prefix aaaa matches 2 runs: ${RUNS[0]![0]}, ${RUNS[1]![0]}; give more of the id\n`,
    );
  });

  it('show of a prefix no run has says so', async () => {
    const r = await fleetbook(['runs', 'show', 'dddd'], env);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.equal('fleetbook: no run dddd\n');
  });

  it('cancel ends a run left unfinished by a process that is gone, and counts the devices its ledger keeps', async () => {
    const id = 'dddd1111-0000-4000-8000-000000000005';
    await withStore(async (store) => {
      // Its owner, a `fleetbook run` killed a minute ago: its lease has expired.
      await runOfGoneProcess(store, { id, playbook: 'suspend-on-overuse', startedAt: started(5) });
      const at = started(5);
      store.recordDevices(
        id,
        'suspend',
        [{ ids: ['d1', 'd2'], kind: 'imei', outcome: 'succeeded', attempts: 1 }],
        at,
      );
      store.recordDevices(
        id,
        'suspend',
        [{ ids: ['d3'], kind: 'imei', outcome: 'accepted', attempts: 1, requestId: 'r1' }],
        at,
      );
      // A batch whose call was sent when the process died, its answer never recorded.
      store.saveStep(id, 'batches[1]/suspend', { status: 'sending' });
      store.saveStep(id, 'batches[0]/suspend', { status: 'succeeded' });
    });

    const r = await fleetbook(['runs', 'cancel', 'dddd'], env);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(r.stdout).to.equal(
      `run ${id} of suspend-on-overuse cancelled; its finally steps did not run.\n` +
        'Its devices keep the outcomes recorded: 2 succeeded, 1 unconfirmed (unconfirmed: the service took their request, and its outcome was not confirmed; a daemon records it if the service sends it later). ' +
        `List them: fleetbook runs show ${id} --devices\n` +
        'Its process stopped after it had sent a call that changes devices, before its answer was recorded (batches[1]/suspend): ' +
        'what the service did is unknown, and the ledger records no result of it for those devices. Read their state (devices.list) before acting on them again.\n',
    );
    const shown = JSON.parse((await fleetbook(['runs', 'show', id, '--json'], env)).stdout) as RunSummary;
    expect(shown).to.deep.include({ runId: id, status: 'cancelled', steps: [] });
    expect(shown.error).to.equal(
      'cancelled by `fleetbook runs cancel` while no process held it: its finally steps did not run; ' +
        'the outcome of a call under way when its process stopped is unknown (batches[1]/suspend)',
    );
    expect(shown.devices).to.deep.include({ total: 3, succeeded: 2, accepted: 0, unconfirmed: 1 });
    expect(shown.endedAt).to.be.a('string');
    // Nobody confirms d3 now: unconfirmed, under its request id, which a later CarrierService message names.
    const devices = await fleetbook(['runs', 'show', id, '--devices', '--json'], env);
    const { deviceResults: rows } = JSON.parse(devices.stdout) as {
      deviceResults: { deviceId: string; outcome: string; requestId?: string }[];
    };
    expect(rows.map((r) => [r.deviceId, r.outcome, r.requestId])).to.deep.equal([
      ['d1', 'succeeded', undefined],
      ['d2', 'succeeded', undefined],
      ['d3', 'unconfirmed', 'r1'],
    ]);
  });

  it('cancel names the call of a devices.retry pass sent when the process died, as of a first pass', async () => {
    const id = 'dddd1111-0000-4000-8000-000000000006';
    await withStore(async (store) => {
      await runOfGoneProcess(store, { id, playbook: 'suspend-on-overuse', startedAt: started(5) });
      // Pass 1 refused d1, which a devices.retry rule sends again: the pass's request left, its answer never came.
      store.saveStep(
        id,
        'suspend',
        {
          status: 'confirming',
          accepted: [{ requestId: 'r1', accountName: 'a', attempts: 1, at: Date.now() - 60_000 }],
          output: { requestId: 'r1' },
          sendingPass: { rule: 0, attempt: 2, since: Date.now() - 60_000 },
        },
        {
          step: 'suspend',
          groups: [
            {
              ids: ['d1'],
              kind: 'imei',
              outcome: 'failed',
              errorType: 'SYSTEM FAILURE',
              errorClass: 'transient',
              attempts: 1,
              requestId: 'r1',
            },
          ],
          at: started(5),
        },
      );
    });

    const r = await fleetbook(['runs', 'cancel', id], env);
    expect([r.code, r.stderr]).to.deep.equal([0, '']);
    expect(r.stdout).to.include(
      'Its process stopped after it had sent a call that changes devices, before its answer was recorded (suspend): ',
    );
    const shown = JSON.parse((await fleetbook(['runs', 'show', id, '--json'], env)).stdout) as RunSummary;
    expect(shown.error).to.equal(
      'cancelled by `fleetbook runs cancel` while no process held it: its finally steps did not run; ' +
        'the outcome of a call under way when its process stopped is unknown (suspend)',
    );
  });

  it('cancel of a run that has ended, or of no run, says so', async () => {
    const ended = await fleetbook(['runs', 'cancel', RUNS[1]![0]], env);
    expect([ended.code, ended.stderr]).to.deep.equal([
      1,
      `fleetbook: run ${RUNS[1]![0]} has already ended (failed): nothing to cancel\n`,
    ]);
    const none = await fleetbook(['runs', 'cancel', 'eeee'], env);
    expect([none.code, none.stderr]).to.deep.equal([1, 'fleetbook: no run eeee\n']);
    const usage = await fleetbook(['runs', 'cancel'], env);
    expect(usage.code).to.equal(2);
  });
});
