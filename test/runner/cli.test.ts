/**
 * `fleetbook run` and `fleetbook runs` as a user runs them: the built binary in a child process, with no
 * FLEETBOOK_API_URL (so against the embedded emulator) and FLEETBOOK_STATE in a temp directory. dist/ must be
 * built (`npm test` builds it before mocha runs).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator } from '../../src/emulator/index.js';
import type { LedgerRow, RunRecord, RunSummary } from '../../src/store/store.js';
import { BIN, deviceLine, fleetbook as run, stateFile } from '../helpers/cli.js';
import { allRows } from '../store/fixtures.js';
import { SUSPEND_ACTIVE } from './playbooks.js';

const fleetbook = (args: string[], env: Record<string, string>) =>
  run(args, { FLEETBOOK_LOG_LEVEL: 'warn', ...env });

const SUSPEND_AND_LOCATE = `
version: 1
name: cli-suspend-and-locate
on: { manual: true }
inputs:
  account: { type: string, required: true }
  batches: { type: integer, default: 1 }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: \${{ inputs.account }}, currentState: active }
  - id: some
    forEach:
      items: \${{ steps.devices.items }}
      batchSize: 5
      concurrency: 2
      steps:
        - id: suspend
          if: \${{ index < inputs.batches }}
          uses: devices.suspend
          with: { accountName: \${{ inputs.account }}, devices: \${{ item }} }
  - id: report
    uses: location.createReport
    with: { accountName: \${{ inputs.account }}, deviceList: \${{ steps.devices.items }}, cacheMode: "0" }
    wait: { for: completion }
`;

const FAILING = `
version: 1
name: cli-fails
on: { manual: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: "0000000000-00000" }
`;

const ON_A_TERMINAL = SUSPEND_ACTIVE({ name: 'cli-on-a-terminal', batchSize: 5, concurrency: 1 });

/** Runs `fleetbook ARGS` on a pseudo-terminal (util-linux `script`), as a person at a terminal does. */
function onTerminal(args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    execFile(
      'script',
      ['-qec', command, '/dev/null'],
      { env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...env }, timeout: 60_000 },
      (err, stdout) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        if (err && code === -1)
          reject(new Error(`script (util-linux) could not run the command: ${err.message}`));
        else resolve({ code, output: stdout });
      },
    );
  });
}

describe('fleetbook run and runs (child process, embedded emulator)', function () {
  this.timeout(60_000);
  const state = stateFile();
  const { env } = state;
  let account: string;

  before(async () => {
    await writeFile(join(state.dir, 'ok.yaml'), SUSPEND_AND_LOCATE);
    await writeFile(join(state.dir, 'fails.yaml'), FAILING);
    await writeFile(join(state.dir, 'tty.yaml'), ON_A_TERMINAL);
    // The embedded emulator is seeded with the defaults: the same accounts as this one.
    const probe = await startEmulator({ timeScale: 0 });
    account = probe.defaults.accounts[0]!;
    await probe.close();
  });

  let okRun: RunSummary;

  it('run --json: exits 0 and prints the run summary on stdout', async () => {
    const r = await fleetbook(
      ['run', join(state.dir, 'ok.yaml'), '--json', '--input', `account=${account}`, '--input', 'batches=2'],
      env,
    );
    expect(r.code, r.stderr).to.equal(0);
    okRun = JSON.parse(r.stdout) as RunSummary;
    expect(okRun).to.include({ playbook: 'cli-suspend-and-locate', status: 'succeeded' });
    expect(okRun.runId).to.be.a('string');
    expect(okRun.startedAt).to.be.a('string');
    expect(okRun.endedAt).to.be.a('string');
    expect(okRun.steps.map((s) => s.id)).to.deep.equal(['devices', 'some', 'suspend', 'report']);
    // `batches=2` is an integer: two batches of five were suspended.
    const suspend = okRun.steps.find((s) => s.id === 'suspend')!;
    expect(suspend.devices).to.deep.equal({
      total: 10,
      accepted: 0,
      succeeded: 10,
      failed: 0,
      skipped: 0,
      unconfirmed: 0,
      byError: {},
    });
    // Each batch's suspend, and the request status that confirmed its devices (no listener in `fleetbook run`).
    expect(suspend.calls).to.equal(4);
    expect(suspend.confirmation).to.deep.equal({ callback: 0, requestStatus: 10, stateRead: 0 });
    const report = okRun.steps.find((s) => s.id === 'report')!;
    expect(report.devices.total).to.be.greaterThan(10);
    expect(okRun.devices.total).to.equal(suspend.devices.total + report.devices.total);
  });

  it('run --json: a failing playbook exits 1 with a failed summary', async () => {
    const r = await fleetbook(['run', join(state.dir, 'fails.yaml'), '--json'], env);
    expect(r.code).to.equal(1);
    const s = JSON.parse(r.stdout) as RunSummary;
    expect(s).to.include({ playbook: 'cli-fails', status: 'failed' });
    expect(s.error).to.match(/^step `devices` failed: devices\.list: HTTP 400 /);
  });

  it('run --dry-run --json: plans the mutating calls and exits 0', async () => {
    const r = await fleetbook(
      ['run', join(state.dir, 'ok.yaml'), '--json', '--dry-run', '--input', `account=${account}`],
      env,
    );
    expect(r.code, r.stderr).to.equal(0);
    const s = JSON.parse(r.stdout) as RunSummary;
    expect(s.dryRun).to.equal(true);
    expect(s.planned?.map((p) => [p.action, p.calls, p.devices])).to.deep.equal([
      ['devices.suspend', 1, 5],
      ['location.createReport', 1, okRun.steps.find((x) => x.id === 'report')!.devices.total],
    ]);
    // The devices it would have acted on are in the ledger, `skipped` with DRY RUN: `runs show --devices` lists
    // them (before, it listed none).
    const shown = await fleetbook(['runs', 'show', s.runId, '--devices'], env);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.include('(dry run)');
    const planned = shown.stdout
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      // A device's line: its step, id, outcome, error type (the step's own line has its time and calls).
      .filter((w) => w[0] === 'suspend' && !w.includes('calls'));
    expect(planned.map((w) => w.slice(2).join(' '))).to.deep.equal(planned.map(() => 'skipped DRY RUN'));
    expect(planned.length).to.equal(5);
  });

  it('run on a terminal: a progress bar of devices done, calls and errors, then the summary', async () => {
    // A store of its own: the test of `runs list` below counts the runs of the shared one.
    const own = { ...env, FLEETBOOK_STATE: join(state.dir, 'tty.db') };
    const r = await onTerminal(['run', join(state.dir, 'tty.yaml'), '--input', `account=${account}`], own);
    expect(r.code, r.output).to.equal(0);
    // eslint-disable-next-line no-control-regex
    const text = r.output.replace(/\u001b\[[0-9;?]*[A-Za-z]|\u001b[78]/g, '');
    const bars = [...text.matchAll(/(\d+)\/(\d+) devices \| (\d+) calls \| (\d+) errors/g)];
    expect(bars.length, text).to.be.greaterThan(0);
    const last = bars[bars.length - 1]!;
    const summary = /suspend +succeeded +[\dhms ]+ calls (\d+) devices (\d+): \2 succeeded, 0 failed/.exec(
      text,
    );
    expect(summary, text).to.not.equal(null);
    const devices = Number(summary![2]);
    expect(devices).to.be.greaterThan(5);
    // The last drawing: every device done, the listing's call, and per batch of 5 one suspend and the
    // request status that confirmed it.
    expect(last.slice(1).map(Number)).to.deep.equal([devices, devices, 1 + 2 * Math.ceil(devices / 5), 0]);
    // Not on a terminal (every other test here), no bar is drawn.
    const plain = await fleetbook(['run', join(state.dir, 'tty.yaml'), '--input', `account=${account}`], own);
    expect(plain.code, plain.stderr).to.equal(0);
    expect(plain.stderr + plain.stdout).to.not.match(/devices \| \d+ calls/);
  });

  it('a bad --input exits 2 before running', async () => {
    const r = await fleetbook(
      [
        'run',
        join(state.dir, 'ok.yaml'),
        '--json',
        '--input',
        `account=${account}`,
        '--input',
        'batches=two',
      ],
      env,
    );
    expect(r.code).to.equal(2);
    expect(r.stdout).to.equal('');
    expect(r.stderr).to.match(/input `batches`/);
    const twice = await fleetbook(
      [
        'run',
        join(state.dir, 'ok.yaml'),
        '--input',
        `account=${account}`,
        '--input',
        'batches=1',
        '--input',
        'batches=2',
      ],
      env,
    );
    expect([twice.code, twice.stdout, twice.stderr]).to.deep.equal([
      2,
      '',
      'fleetbook: --input batches is given twice ("1" and "2"): give it once\n',
    ]);
  });

  it('a playbook that names a secret nobody set exits 2 before running; set, it runs', async () => {
    const file = join(state.dir, 'secret.yaml');
    await writeFile(
      file,
      `version: 1
name: secret-note
on: { manual: true }
steps:
  - id: first
    uses: log
    with: { message: before }
  - id: note
    uses: log
    with: { message: 'token \${{ secrets.TEAM_TOKEN }} of \${{ secrets["TEAM_NAME"] }}' }
`,
    );
    const own = { FLEETBOOK_STATE: join(state.dir, 'secret.db') };
    const unset = await fleetbook(['run', file, '--json'], { ...own, FLEETBOOK_SECRET_TEAM_NAME: 'ops' });
    expect([unset.code, unset.stdout, unset.stderr]).to.deep.equal([
      2,
      '',
      'fleetbook: playbook secret-note reads secrets.TEAM_TOKEN, not set: set FLEETBOOK_SECRET_TEAM_TOKEN\n',
    ]);
    expect(existsSync(own.FLEETBOOK_STATE), 'nothing run, no store opened').to.equal(false);
    const set = await fleetbook(['run', file, '--json'], {
      ...own,
      FLEETBOOK_SECRET_TEAM_NAME: 'ops',
      FLEETBOOK_SECRET_TEAM_TOKEN: 'secret-token-cli-test',
    });
    expect(set.code, set.stderr).to.equal(0);
    expect((JSON.parse(set.stdout) as RunSummary).status).to.equal('succeeded');
  });

  it('runs list and runs show ID --devices --json read the same store', async () => {
    const list = await fleetbook(['runs', 'list', '--json'], env);
    expect(list.code, list.stderr).to.equal(0);
    const runs = JSON.parse(list.stdout) as RunRecord[];
    expect(runs.map((x) => [x.playbook, x.status])).to.deep.equal([
      ['cli-suspend-and-locate', 'succeeded'],
      ['cli-fails', 'failed'],
      ['cli-suspend-and-locate', 'succeeded'],
    ]);
    expect(runs[2]!.id).to.equal(okRun.runId);

    const show = await fleetbook(['runs', 'show', okRun.runId, '--devices', '--json'], env);
    expect(show.code, show.stderr).to.equal(0);
    const shown = JSON.parse(show.stdout) as RunSummary & { deviceResults: LedgerRow[] };
    const { deviceResults, ...summary } = shown;
    expect(summary).to.deep.equal(okRun);
    // One ledger row per device and step, agreeing with the summary's counts.
    expect(deviceResults).to.have.length(okRun.devices.total);
    expect(deviceResults.filter((d) => d.step === 'suspend')).to.have.length(10);
    expect(deviceResults.filter((d) => d.outcome === 'succeeded')).to.have.length(okRun.devices.succeeded);
    expect(deviceResults.every((d) => d.runId === okRun.runId)).to.equal(true);
    // Written row by row as the store streams them, it is exactly what one JSON.stringify would write.
    await state.withStore(async (store) => {
      const whole = {
        ...(await store.getRun(okRun.runId))?.summary,
        deviceResults: await allRows(store.eachDeviceResult(okRun.runId)),
      };
      expect(show.stdout).to.equal(`${JSON.stringify(whole, null, 2)}\n`);
      // The same rows as the ledger read whole, step by step in the order they came.
      const byDevice = (rows: LedgerRow[]) =>
        [...rows].sort((a, b) => a.step.localeCompare(b.step) || a.deviceId.localeCompare(b.deviceId));
      expect(byDevice(deviceResults)).to.deep.equal(await store.deviceResults(okRun.runId));
    });
    const lines = await fleetbook(['runs', 'show', okRun.runId, '--devices'], env);
    expect(lines.code, lines.stderr).to.equal(0);
    // The summary, then a line per device in the store's order.
    expect(lines.stdout.split('\n').slice(-deviceResults.length - 1, -1)).to.deep.equal(
      deviceResults.map(deviceLine),
    );

    const text = await fleetbook(['runs', 'show', okRun.runId], env);
    expect(text.code).to.equal(0);
    expect(text.stdout).to.contain(`run ${okRun.runId} of cli-suspend-and-locate: succeeded\n`);
    expect(okRun.version).to.match(/^[0-9a-f]{16}$/);
    expect(text.stdout).to.contain(`\n  version: ${okRun.version}\n`);

    const missing = await fleetbook(['runs', 'show', 'no-such-run'], env);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain('no run no-such-run');
  });
});
