/**
 * A device-state answer without its request id, and then the read of the devices' state that stands in for it
 * fails: a 5xx, or a cancel that cuts it off. The read's error is a read's (reconcile: the devices it had not found
 * changed are `unconfirmed`, with its error or OUTCOME UNKNOWN), never the send's: the devices a read before it
 * found changed stay `succeeded`, and the request is not sent again (answer-without-request-id.test.ts).
 *
 * The real emulator behind a proxy that drops the request id from the suspend's answer and fails chosen reads of
 * the devices' state (answered 500 in the emulator's place, test/helpers/rewriting-proxy.ts).
 */
import { expect } from 'chai';
import { accountDevices, actionCounts, imei, memoryStore, suspendYaml, type Json } from './helpers.js';
import { behindRewritingProxy } from './proxied.js';

/** The attempts the client makes at a read the service answers 500 (its default `retry.maxAttempts`). */
const CLIENT_ATTEMPTS = 5;

describe('runner: a failed read of the devices after an answer without its request id', function () {
  this.timeout(60_000);
  const w = behindRewritingProxy(memoryStore);
  /** The reads of the devices' state answered so far, and what each does with its answer, by its number. */
  let reads: number;
  let onRead: (n: number) => void;

  beforeEach(() => {
    reads = 0;
    onRead = () => undefined;
    w.rewrite = (_method, path, body) => {
      if (path.endsWith('/devices/actions/suspend')) {
        const { requestId: _, ...rest } = body as Json;
        return rest;
      }
      if (path.endsWith('/devices/actions/list')) onRead(++reads);
      return undefined;
    };
  });

  /** Two active devices, which the suspend changes at once, and one deactive, which it never changes. */
  async function devices() {
    const deactive = imei((await accountDevices(w.emu, w.account)).find((d) => d.state === 'deactive')!);
    return { changed: w.active.slice(0, 2), unchanged: deactive };
  }

  async function suspend(ids: string[], retry = '', signal?: AbortSignal) {
    const summary = await w.run(
      suspendYaml('read-fails', w.account, ids, `confirm: { timeout: 10m, pollInterval: 5s }\n    ${retry}`),
      signal ? { signal } : {},
    );
    const rows = await w.ledger(summary.runId);
    expect(w.proxy.rewritten).to.be.greaterThan(0);
    return { summary, rows, suspends: (await actionCounts(w.emu))['devices.suspend'] };
  }

  it('a 5xx of a later read leaves the devices found changed succeeded, the others unconfirmed', async () => {
    const { changed, unchanged } = await devices();
    onRead = (n) => {
      if (n >= 2) throw new Error('read refused');
    };
    const { summary, rows, suspends } = await suspend([...changed, unchanged]);
    expect(summary.status).to.equal('failed');
    expect(rows).to.deep.equal([
      ...changed.map((id) => [id, 'succeeded', undefined, undefined]),
      [unchanged, 'unconfirmed', 'HTTP_500', undefined],
    ]);
    // The failed read (the client's attempts at it) is the last: not read again as if the send had failed.
    expect(reads).to.equal(1 + CLIENT_ATTEMPTS);
    expect(summary.steps[0]?.attempts).to.equal(1);
    expect(suspends).to.equal(1);
  });

  it('a read that fails for good is not followed by the request sent again', async () => {
    const { changed, unchanged } = await devices();
    // The second read fails, and so does the step's one retry of it (each the client's own attempts at it); a read
    // after them would answer.
    onRead = (n) => {
      if (n >= 2 && n < 2 + 2 * CLIENT_ATTEMPTS) throw new Error('read refused');
    };
    const { summary, rows, suspends } = await suspend(
      [...changed, unchanged],
      'retry: { maxAttempts: 2, on: [http.5xx] }',
    );
    expect(suspends).to.equal(1);
    expect(summary.status).to.equal('failed');
    expect(rows).to.deep.equal([
      ...changed.map((id) => [id, 'succeeded', undefined, undefined]),
      [unchanged, 'unconfirmed', 'HTTP_500', undefined],
    ]);
  });

  it('a cancel that cuts a later read off leaves the devices found changed succeeded', async () => {
    const { changed, unchanged } = await devices();
    const cancel = new AbortController();
    onRead = (n) => {
      if (n === 2) cancel.abort(new Error('cancelled from the console'));
    };
    const { summary, rows, suspends } = await suspend([...changed, unchanged], '', cancel.signal);
    expect(summary.status).to.equal('cancelled');
    expect(rows).to.deep.equal([
      ...changed.map((id) => [id, 'succeeded', undefined, undefined]),
      [unchanged, 'unconfirmed', 'OUTCOME UNKNOWN', undefined],
    ]);
    expect(suspends).to.equal(1);
  });
});
