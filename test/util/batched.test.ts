/** Calls that go out together: one at once, the rest while it is on its way in the next batch. */
import { expect } from 'chai';
import { Batched } from '../../src/util/batched.js';

/** A send whose batches are recorded and answered when the test says so. */
function held() {
  const batches: number[][] = [];
  const answers: { resolve: (outs: string[]) => void; reject: (e: Error) => void }[] = [];
  const batched = new Batched<number, string>((inputs) => {
    batches.push(inputs);
    return new Promise((resolve, reject) => answers.push({ resolve, reject }));
  });
  return { batched, batches, answers };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('Batched', () => {
  it('sends the first call alone and the calls made meanwhile together, each answered its own', async () => {
    const { batched, batches, answers } = held();
    const first = batched.call(1);
    const rest = [batched.call(2), batched.call(3)];
    await settle();
    expect(batches).to.deep.equal([[1]]);
    answers[0]!.resolve(['one']);
    expect(await first).to.equal('one');
    await settle();
    expect(batches).to.deep.equal([[1], [2, 3]]);
    answers[1]!.resolve(['two', 'three']);
    expect(await Promise.all(rest)).to.deep.equal(['two', 'three']);
    // Nothing on its way: the next call goes at once.
    void batched.call(4);
    expect(batches).to.deep.equal([[1], [2, 3], [4]]);
  });

  it('fails every call of a failed batch, and sends the next one all the same', async () => {
    const { batched, batches, answers } = held();
    const first = batched.call(1);
    const second = batched.call(2);
    answers[0]!.reject(new Error('connection lost'));
    const failed = await first.then(
      () => undefined,
      (e: Error) => e.message,
    );
    expect(failed).to.equal('connection lost');
    await settle();
    expect(batches).to.deep.equal([[1], [2]]);
    answers[1]!.resolve(['two']);
    expect(await second).to.equal('two');
  });

  it('fails the calls of a batch whose send throws at once', async () => {
    const batched = new Batched<number, number>(() => {
      throw new Error('bad input');
    });
    const answers = await Promise.allSettled([batched.call(1), batched.call(2)]);
    expect(answers.map((a) => (a as PromiseRejectedResult).reason.message)).to.deep.equal([
      'bad input',
      'bad input',
    ]);
  });
});
