/**
 * A run's steps from its checkpoints (store/checkpoint-steps.ts), along the shapes a playbook nests: a
 * `parallel`'s branches all under way at once, a rescue (`onError` steps) under way after its step failed, a
 * failure nothing handles making the steps after it `unreached` while `finally` runs, a queued run, and a run
 * ended while its process was in a step (`runs cancel` of a run no process held).
 */
import { expect } from 'chai';
import type { Playbook } from '../../src/playbook/schema.js';
import { checkpointSteps } from '../../src/store/checkpoint-steps.js';

const log = (id: string, more: object = {}) => ({ id, uses: 'log', with: { message: id }, ...more });
const PB = {
  steps: [
    log('a'),
    { id: 'par', parallel: [log('b1'), { id: 'b2', wait: '10m' }] },
    log('risky', { onError: [log('fix')] }),
    log('last'),
  ],
  finally: [log('bye')],
} as unknown as Pick<Playbook, 'steps' | 'finally'>;

const shown = (marks: Record<string, object>, run: 'queued' | 'running' | 'ended') =>
  checkpointSteps(new Map(Object.entries(marks)), PB, run).map((s) => [s.id, s.status, s.within ?? null]);

describe('the steps of a run from its checkpoints', () => {
  it('a parallel under way: each branch as its checkpoint says, the step after it pending', () => {
    expect(
      shown(
        { a: { status: 'succeeded' }, b1: { status: 'succeeded' }, b2: { status: 'waiting' } },
        'running',
      ),
    ).to.deep.equal([
      ['a', 'succeeded', null],
      ['par', 'running', null],
      ['b1', 'succeeded', 'par'],
      ['b2', 'running', 'par'],
      ['risky', 'pending', null],
      ['fix', 'pending', 'risky'],
      ['last', 'pending', null],
      ['bye', 'pending', null],
    ]);
  });

  it('a rescue under way after its step failed; a branch not yet checkpointed is running too', () => {
    expect(
      shown({ a: { status: 'succeeded' }, b2: { status: 'waiting' } }, 'running').slice(1, 4),
    ).to.deep.equal([
      ['par', 'running', null],
      ['b1', 'running', 'par'],
      ['b2', 'running', 'par'],
    ]);
    const marks = {
      a: { status: 'succeeded' },
      par: { status: 'succeeded' },
      b1: { status: 'succeeded' },
      b2: { status: 'succeeded' },
      risky: { status: 'failed', error: 'it broke' },
    };
    expect(shown(marks, 'running').slice(4)).to.deep.equal([
      ['risky', 'failed', null],
      ['fix', 'running', 'risky'],
      ['last', 'pending', null],
      ['bye', 'pending', null],
    ]);
  });

  it('a failure nothing handles: the steps after it unreached, finally running', () => {
    expect(shown({ a: { status: 'failed', error: 'no' } }, 'running')).to.deep.equal([
      ['a', 'failed', null],
      ['par', 'unreached', null],
      ['b1', 'unreached', 'par'],
      ['b2', 'unreached', 'par'],
      ['risky', 'unreached', null],
      ['fix', 'unreached', 'risky'],
      ['last', 'unreached', null],
      ['bye', 'running', null],
    ]);
  });

  it('queued: every step pending', () => {
    expect(shown({}, 'queued').map(([, status]) => status)).to.deep.equal(Array(8).fill('pending'));
  });

  it('ended while its process was in a step: that step cancelled, the rest unreached', () => {
    expect(
      shown({ a: { status: 'succeeded' }, b1: { status: 'succeeded' }, b2: { status: 'waiting' } }, 'ended'),
    ).to.deep.equal([
      ['a', 'succeeded', null],
      ['par', 'cancelled', null],
      ['b1', 'succeeded', 'par'],
      ['b2', 'cancelled', 'par'],
      ['risky', 'unreached', null],
      ['fix', 'unreached', 'risky'],
      ['last', 'unreached', null],
      ['bye', 'unreached', null],
    ]);
  });
});
