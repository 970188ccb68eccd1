/**
 * `fleetbook run` and `runs show` print the steps of a `forEach` or a `parallel` under it, indented, and the
 * summary names the step each is within: a flat list told nothing of which step ran inside which. The built
 * binary in a child process, on a state file of its own (dist/ must be built; `npm test` builds it).
 */
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = join(import.meta.dirname, '..', 'fixtures', 'nested-steps', 'nested.yaml');

describe('fleetbook runs show: steps within steps (child process)', function () {
  this.timeout(60_000);
  let tmp: string;

  before(async () => {
    tmp = tempDir('fleetbook-runs-nested-steps-');
  });

  it('indents the steps of a forEach and a parallel under them, in the summary and in runs show', async () => {
    const env = { FLEETBOOK_STATE: join(tmp, 'state.db') };
    const r = await fleetbook(['run', PLAYBOOK], env);
    expect(r.code, r.stderr).to.equal(0);
    const steps = (out: string) =>
      out
        .split('\n')
        .filter((l) => / calls /.test(l))
        .map((l) => /^(\s+\S+)\s/.exec(l)![1]);
    const expected = ['  each', '    inner', '    both', '      left', '      right', '  after', '  bye'];
    expect(steps(r.stdout)).to.deep.equal(expected);
    const runId = /^run (\S+) of/.exec(r.stdout)![1]!;
    expect(steps((await fleetbook(['runs', 'show', runId], env)).stdout)).to.deep.equal(expected);
    const s = JSON.parse((await fleetbook(['runs', 'show', runId, '--json'], env)).stdout) as RunSummary;
    expect(s.steps.map((x) => [x.id, x.within ?? null])).to.deep.equal([
      ['each', null],
      ['inner', 'each'],
      ['both', 'each'],
      ['left', 'both'],
      ['right', 'both'],
      ['after', null],
      ['bye', null],
    ]);
  });
});
