/**
 * Each subcommand of `runs` and `store` takes only its own arguments and flags (child processes; dist/ must be
 * built). They shared one declaration, so `runs list extra` listed every run, `runs list --devices` and
 * `runs cancel ID --devices` went on without a word, and `store migrate --older-than 1d` migrated.
 */
import { expect } from 'chai';
import type { RunRecord } from '../../src/store/store.js';
import { fleetbook, runOfGoneProcess, stateFile } from '../helpers/cli.js';

const ID = 'aaaa1111-0000-4000-8000-000000000001';

describe('runs and store subcommands refuse what they do not take (child process)', function () {
  this.timeout(60_000);
  const { env } = stateFile(async (store) => {
    // Left running by a process that is gone: a cancel that went ahead would end it.
    await runOfGoneProcess(store, { id: ID, playbook: 'nightly', startedAt: '2026-11-22T00:00:00.000Z' });
  });

  const CASES: [string[], string][] = [
    [['runs', 'list', 'extra'], "error: too many arguments for 'list'. Expected 0 arguments but got 1."],
    [['runs', 'list', '--json', '--devices'], "error: unknown option '--devices'"],
    [['runs', 'show', ID, '--limit', '1'], "error: unknown option '--limit'"],
    [['runs', 'show', ID, 'extra'], "error: too many arguments for 'show'. Expected 1 argument but got 2."],
    [['runs', 'cancel', ID, '--devices'], "error: unknown option '--devices'"],
    [['runs', 'cancel', ID, '--json'], "error: unknown option '--json'"],
    [['runs', 'lsit'], "error: unknown command 'lsit'"],
    [['runs', '--devices'], "error: unknown option '--devices'"],
    [['store', 'migrate', '--older-than', '1d'], "error: unknown option '--older-than'"],
    [['store', 'compact', '--older-than', '1d'], "error: unknown option '--older-than'"],
    [
      ['store', 'prune', '--older-than', '1d', 'extra'],
      "error: too many arguments for 'prune'. Expected 0 arguments but got 1.",
    ],
  ];
  for (const [args, error] of CASES)
    it(`${args.join(' ')}: exit 2, naming it`, async () => {
      const r = await fleetbook(args, env);
      expect([r.code, r.stdout, r.stderr.split('\n')[0]]).to.deep.equal([2, '', error]);
      expect(r.stderr).to.include('\nUsage: fleetbook ');
    });

  // An empty id is the start of every id: with one run in the store, `runs cancel ''` ended it.
  for (const args of [
    ['runs', 'cancel', ''],
    ['runs', 'cancel', ' '],
    ['runs', 'show', ''],
  ])
    it(`${args.map((a) => JSON.stringify(a)).join(' ')}: exit 2, asking for a run id`, async () => {
      const r = await fleetbook(args, env);
      expect([r.code, r.stdout, r.stderr]).to.deep.equal([
        2,
        '',
        `fleetbook: the run id is empty (got ${JSON.stringify(args[2])}): give a run id, or the start of one\n`,
      ]);
    });

  it('the run is still running, and `runs` alone lists it as `runs list` does', async () => {
    const alone = await fleetbook(['runs', '--json'], env);
    expect([alone.code, alone.stderr]).to.deep.equal([0, '']);
    expect(alone.stdout).to.equal((await fleetbook(['runs', 'list', '--json'], env)).stdout);
    expect((JSON.parse(alone.stdout) as RunRecord[]).map((r) => [r.id, r.status])).to.deep.equal([
      [ID, 'running'],
    ]);
  });
});
