/**
 * A device-state action answered 2xx without a request id: a device action answers `{ requestId }`, and without
 * one the request cannot be followed. Its devices' state was read back (those changed succeed), but those never
 * read changed ended `unconfirmed` with no error type, and the step succeeded; an answer whose request id has a
 * NUL, which cannot be followed either, gave them `MALFORMED ANSWER` and failed the step. Both now go the same
 * way: read back, the others `unconfirmed` (`MALFORMED ANSWER`), the request sent once, and the step fails saying
 * why (docs/spec-decisions.md, "Asynchronous requests"). The request id with a NUL is service-nul.test.ts's first
 * test, on both stores.
 *
 * The real emulator does the work; a proxy in front of it rewrites its answer (test/helpers).
 */
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { calls, memoryStore, setFaults, suspendYaml, type Json } from './helpers.js';
import { behindRewritingProxy } from './proxied.js';

describe('runner: a device-state answer without a usable request id', function () {
  this.timeout(30_000);
  const w = behindRewritingProxy(memoryStore);

  /** A suspend of the three devices, the carrier never carrying it out for the third, its answer rewritten. */
  async function suspend(answer: (body: Json) => Json): Promise<RunSummary> {
    await setFaults(w.emu, { neverFinishDevices: [w.active[2]!] });
    w.rewrite = (_method, path, body) =>
      path.endsWith('/devices/actions/suspend') ? answer(body as Json) : undefined;
    return w.run(
      suspendYaml('no-request-id', w.account, w.active, 'confirm: { timeout: 2s, pollInterval: 100ms }'),
    );
  }

  for (const [what, answer, says] of [
    ['no request id', ({ requestId: _, ...rest }: Json) => rest, /no requestId/],
    ['an empty request id', (body: Json) => ({ ...body, requestId: '' }), /no requestId/],
  ] as const)
    it(`${what}: read back, the others unconfirmed (MALFORMED ANSWER), sent once, the step failed`, async () => {
      const s = await suspend(answer);
      expect(w.proxy.rewritten, 'answers rewritten').to.be.greaterThan(0);
      expect(s.status).to.equal('failed');
      const step = s.steps[0]!;
      expect(step.status).to.equal('failed');
      expect(step.error).to.include("devices.suspend: the service's answer is refused");
      expect(step.error).to.match(says);
      expect(await w.ledger(s.runId)).to.deep.equal([
        [w.active[0], 'succeeded', undefined, undefined],
        [w.active[1], 'succeeded', undefined, undefined],
        [w.active[2], 'unconfirmed', 'MALFORMED ANSWER', undefined],
      ]);
      expect(step.devices.byError).to.deep.equal({ 'MALFORMED ANSWER': 1 });
      expect((await calls(w.emu)).actions['devices.suspend'], 'suspends sent').to.equal(1);
    });
});
