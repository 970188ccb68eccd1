import { expect } from 'chai';
import { readAhead } from '../../src/util/read-ahead.js';

/** A source of `n` pages that logs when each is asked for and when the caller is done with it. */
function pages(n: number, log: string[], failAt?: number) {
  return (async function* () {
    try {
      for (let i = 1; i <= n; i++) {
        log.push(`fetch ${i}`);
        await new Promise((r) => setTimeout(r, 1));
        if (i === failAt) throw new Error(`page ${i} failed`);
        yield i;
      }
    } finally {
      log.push('source closed');
    }
  })();
}

describe('readAhead', () => {
  it('yields every value in order, asking for the next one before the caller works on the current one', async () => {
    const log: string[] = [];
    const seen: number[] = [];
    for await (const p of readAhead(pages(3, log))) {
      log.push(`work ${p}`);
      seen.push(p);
    }
    expect(seen).to.deep.equal([1, 2, 3]);
    expect(log).to.deep.equal([
      'fetch 1',
      'fetch 2',
      'work 1',
      'fetch 3',
      'work 2',
      // Asked for a fourth value, the source ends before the caller works on the third.
      'source closed',
      'work 3',
    ]);
  });

  it('a caller that stops early waits for the value read ahead, and the source is closed', async () => {
    const log: string[] = [];
    for await (const p of readAhead(pages(5, log))) {
      log.push(`work ${p}`);
      if (p === 2) break;
    }
    log.push('after the loop');
    expect(log).to.deep.equal([
      'fetch 1',
      'fetch 2',
      'work 1',
      'fetch 3',
      'work 2',
      'source closed',
      'after the loop',
    ]);
  });

  it('an error of the read ahead reaches the caller at its next turn, after the value before it', async () => {
    const log: string[] = [];
    const seen: number[] = [];
    let unhandled = 0;
    const onUnhandled = () => unhandled++;
    process.on('unhandledRejection', onUnhandled);
    try {
      const err = await (async () => {
        try {
          for await (const p of readAhead(pages(5, log, 2))) {
            // The read ahead fails while this value is worked on.
            await new Promise((r) => setTimeout(r, 5));
            seen.push(p);
          }
        } catch (e) {
          return e as Error;
        }
        return undefined;
      })();
      expect(err?.message).to.equal('page 2 failed');
      expect(seen).to.deep.equal([1]);
      await new Promise((r) => setImmediate(r));
      expect(unhandled).to.equal(0);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
