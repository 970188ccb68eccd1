/**
 * The secrets a resumed run still needs (runner/resume-secrets.ts), from its playbook and its checkpoints: what
 * it evaluates again of the steps it finished (a `set`, the rescue steps of one that failed; not their `if`), the
 * steps it has not finished, its `finally`, its `vars`. A secret only finished steps read is not needed: before,
 * the daemon refused to start over it, and the runner failed the resumed run.
 */
import { expect } from 'chai';
import { planOf } from '../../src/runner/plan.js';
import { secretsStillRead } from '../../src/runner/resume-secrets.js';
import type { Checkpoint } from '../../src/runner/types.js';
import { playbook } from './helpers.js';

const done: Checkpoint = { status: 'succeeded', output: null };
const failed: Checkpoint = { status: 'failed', error: 'boom' };

/** The secrets still read by a run of `yaml` (its steps after `steps:`) with these checkpoints, sorted. */
function still(yaml: string, checkpoints: Record<string, Checkpoint>, head = ''): string[] {
  const pb = playbook(`version: 1\nname: resumed\non: { manual: true }\n${head}steps:\n${yaml}`);
  return [...secretsStillRead(planOf(pb), new Map(Object.entries(checkpoints)))].sort();
}

const log = (id: string, message: string, more = '') =>
  `  - id: ${id}\n    uses: log\n    with: { message: '${message}' }\n${more}`;

describe('runner: the secrets a resumed run still reads', () => {
  const twoSteps = log('first', 'A ${{ secrets.A }}') + log('second', 'B ${{ secrets.B }}');

  it('a run that never executed needs every secret of its playbook', () => {
    expect(still(twoSteps, {})).to.deep.equal(['A', 'B']);
  });

  it('a finished step is not evaluated again; one in flight or not reached is', () => {
    expect(still(twoSteps, { first: done })).to.deep.equal(['B']);
    expect(still(twoSteps, { first: done, second: done })).to.deep.equal([]);
    expect(still(twoSteps, { first: { status: 'sending', since: 0 } })).to.deep.equal(['A', 'B']);
    // Done and failed alike: a failed step fails again from its checkpoint, not from its inputs.
    expect(still(twoSteps, { first: failed })).to.deep.equal(['B']);
  });

  it('a finished `set` is evaluated again; the `if` of a step with a checkpoint is not', () => {
    const steps =
      log('first', 'x', "    if: ${{ secrets.A == 'on' }}\n") +
      '  - id: remember\n    set: { token: "${{ secrets.B }}" }\n' +
      log('last', 'done');
    // Finished, or in flight: it began, its `if` held, and it stays as its checkpoint says.
    expect(still(steps, { first: done, remember: done, last: done })).to.deep.equal(['B']);
    expect(still(steps, { first: { status: 'sending', since: 0 } })).to.deep.equal(['B']);
    // Not begun: its `if` is evaluated.
    expect(still(steps, {})).to.deep.equal(['A', 'B']);
  });

  it("the rescue steps of a failed step run again; a succeeded step's do not", () => {
    const steps = log(
      'first',
      'x',
      "    onError:\n      - id: rescue\n        uses: log\n        with: { message: 'R ${{ secrets.R }}' }\n",
    );
    expect(still(steps, { first: failed })).to.deep.equal(['R']);
    expect(still(steps, { first: failed, rescue: done })).to.deep.equal([]);
    expect(still(steps, { first: done })).to.deep.equal([]);
    expect(still(steps, { first: { status: 'waiting', until: 0 } })).to.deep.equal(['R']);
  });

  it('a finally step always runs, unless it finished', () => {
    const fin = "finally:\n  - id: cleanup\n    uses: log\n    with: { message: 'F ${{ secrets.F }}' }\n";
    expect(still(log('first', 'A ${{ secrets.A }}') + fin, { first: done })).to.deep.equal(['F']);
    expect(still(log('first', 'A ${{ secrets.A }}') + fin, { first: done, cleanup: done })).to.deep.equal([]);
  });

  // A concurrency key reads no secret: validate refuses it there (it is rendered from event and inputs only).
  it('vars are evaluated again; a tested secret is not needed', () => {
    const head = 'vars: { v: "${{ secrets.V }}" }\n';
    expect(still(log('first', 'A ${{ secrets.A }}'), { first: done }, head)).to.deep.equal(['V']);
    const tested = log('first', '${{ has(secrets.T) ? "y" : "n" }}') + log('second', '${{ secrets.T }}');
    expect(still(tested, {})).to.deep.equal([]);
  });

  const loop = `  - id: each
    forEach:
      items: "\${{ [secrets.I] }}"
      steps:
${log('note', 'N ${{ secrets.N }}').replace(/^(?=.)/gm, '      ')}`;

  it('a forEach is entered again: its items, and each iteration not finished', () => {
    const iterations = (n: number): Checkpoint => ({
      status: 'succeeded',
      output: { iterations: n, failed: 0 },
    });
    expect(still(loop, { each: iterations(2), 'each[0]/note': done, 'each[1]/note': done })).to.deep.equal([
      'I',
    ]);
    expect(still(loop, { each: iterations(2), 'each[0]/note': done })).to.deep.equal(['I', 'N']);
    // Partly done: how many iterations are left is not known.
    expect(still(loop, { 'each[0]/note': done })).to.deep.equal(['I', 'N']);
    // Failed, it kept no count of its iterations.
    expect(still(loop, { each: failed, 'each[0]/note': done })).to.deep.equal(['I', 'N']);
  });

  it('a parallel step is entered again: each branch not finished', () => {
    const par = `  - id: both
    parallel:
${log('left', 'L ${{ secrets.L }}').replace(/^(?=.)/gm, '      ')}${log('right', 'R ${{ secrets.R }}').replace(/^(?=.)/gm, '      ')}`;
    expect(still(par, { left: done })).to.deep.equal(['R']);
    expect(still(par, { both: done, left: done, right: done })).to.deep.equal([]);
  });
});
