/**
 * A run that failed early, or was cancelled, shows every step of its playbook's version: those it never reached
 * `unreached`, nested ones under their loop, apart from a step skipped by its `if`. Before, `runs show` listed
 * only the steps that started, and nothing said what did not happen. And `runs list --json` gives each run's
 * device counts, as the daemon's `GET /runs` does. Each step's line says how long it took, as `--json`'s times
 * tell: before, only `--json`, the API and the console had them. The built binary in child processes, on a state file of its
 * own (dist/ must be built; `npm test` builds it).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { BIN, fleetbook, stateFile } from '../helpers/cli.js';
import { stepLines, took } from '../helpers/step-lines.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'unreached-steps');
const IF_FALSE = '(`if` was false)';

describe('fleetbook runs show: the steps a run never reached (child process)', function () {
  this.timeout(60_000);
  const { env } = stateFile();

  it('a run that failed early lists the steps after its failure `unreached`, nested ones indented', async () => {
    const r = await fleetbook(['run', join(FIXTURES, 'stops-early.yaml')], env);
    expect(r.code, r.stderr).to.equal(1);
    const runId = /^run (\S+) of/.exec(r.stdout)![1]!;
    const s = JSON.parse((await fleetbook(['runs', 'show', runId, '--json'], env)).stdout) as RunSummary;
    // How long each step it ran took, from its times; a step it skipped or never reached has none.
    const of = (id: string) => took(s.steps.find((x) => x.id === id));
    expect(
      ['first', 'stop', 'bye'].map(of).every((t) => t !== '-'),
      JSON.stringify(s.steps),
    ).to.equal(true);
    const expected = [
      ['  first', 'succeeded', of('first'), ''],
      ['  quiet', 'skipped', '-', IF_FALSE],
      ['  stop', 'failed', of('stop'), '(stopped on purpose)'],
      ['  each', 'unreached', '-', ''],
      ['    inner', 'unreached', '-', ''],
      ['  after', 'unreached', '-', ''],
      ['  bye', 'succeeded', of('bye'), ''],
    ];
    expect(stepLines(r.stdout), 'fleetbook run').to.deep.equal(expected);
    const shown = await fleetbook(['runs', 'show', runId], env);
    expect(stepLines(shown.stdout), `runs show: ${shown.stdout}${shown.stderr}`).to.deep.equal(expected);
    expect(s.steps.map((x) => [x.id, x.status, x.within ?? null])).to.deep.equal([
      ['first', 'succeeded', null],
      ['quiet', 'skipped', null],
      ['stop', 'failed', null],
      ['each', 'unreached', null],
      ['inner', 'unreached', 'each'],
      ['after', 'unreached', null],
      ['bye', 'succeeded', null],
    ]);
    // A step never reached made no call and counted no device: its summary says so in the usual members.
    expect(s.steps.find((x) => x.id === 'after')).to.deep.equal({
      id: 'after',
      status: 'unreached',
      attempts: 0,
      calls: 0,
      devices: { total: 0, accepted: 0, succeeded: 0, failed: 0, skipped: 0, unconfirmed: 0, byError: {} },
    });
  });

  it('a cancelled run lists the steps after the cancel `unreached`, and its `finally` as it ran', async () => {
    const child = spawn(process.execPath, [BIN, 'run', join(FIXTURES, 'held-up.yaml')], {
      env: { PATH: process.env.PATH ?? '', ...env, FLEETBOOK_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        if (stderr.split('\n').some((l) => l.includes('step started') && l.includes('"step":"hold"')))
          resolve();
      });
    });
    child.kill('SIGINT');
    expect(await exited, stderr).to.equal(1);
    const runId = /^run (\S+) of/.exec(stdout)![1]!;
    const shown = await fleetbook(['runs', 'show', runId], env);
    expect(shown.stdout.split('\n')[0]).to.equal(`run ${runId} of held-up: cancelled`);
    const s = JSON.parse((await fleetbook(['runs', 'show', runId, '--json'], env)).stdout) as RunSummary;
    const of = (id: string) => took(s.steps.find((x) => x.id === id));
    const expected = [
      ['  quiet', 'skipped', '-', IF_FALSE],
      ['  hold', 'cancelled', of('hold'), '(cancelled by signal)'],
      ['  each', 'unreached', '-', ''],
      ['    inner', 'unreached', '-', ''],
      ['  after', 'unreached', '-', ''],
      ['  bye', 'succeeded', of('bye'), ''],
    ];
    expect(stepLines(shown.stdout), `runs show: ${shown.stdout}${shown.stderr}`).to.deep.equal(expected);
    expect(stepLines(stdout), 'fleetbook run').to.deep.equal(expected);
  });

  it('runs list --json gives each run its device counts, as `GET /runs` does', async () => {
    const r = await fleetbook(['runs', 'list', '--json'], env);
    expect(r.code, r.stderr).to.equal(0);
    const runs = JSON.parse(r.stdout) as { playbook: string; devices?: unknown }[];
    expect(runs.map((x) => [x.playbook, x.devices])).to.deep.equal(
      ['held-up', 'stops-early'].map((p) => [
        p,
        { total: 0, accepted: 0, succeeded: 0, failed: 0, skipped: 0, unconfirmed: 0, byError: {} },
      ]),
    );
  });
});
