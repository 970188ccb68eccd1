/**
 * A 2xx answer to a device-state action without its request id: the service took the request, but nothing
 * correlates its outcome (no callback, no request status). product.md section 5 asks for the devices' state to be
 * read instead: each device read changed has succeeded, and the reading ends as soon as every device is; a
 * device not changed may still be in the carrier's hands (refused, or pending: its state does not tell), so it is
 * read until the confirmation time and then `unconfirmed` (accepted, no confirmation came), never sent again.
 * The answer is not the `{ requestId }` a device action answers: its devices left unconfirmed say so (`MALFORMED
 * ANSWER`), and the step fails saying why, as for a request id with a NUL (no-request-id.test.ts): a gateway's
 * `200 {}` is never read as a suspend that went well (docs/spec-decisions.md, "Asynchronous requests").
 *
 * The real emulator, a carrier that takes 30 simulated seconds, and a proxy in front of it that drops the
 * request id from the answer (test/helpers).
 */
import { expect } from 'chai';
import { accountDevices, calls, imei, memoryStore, setFaults, suspendYaml, type Json } from './helpers.js';
import { behindRewritingProxy } from './proxied.js';

const TIMEOUT_MS = 10 * 60_000;

describe('runner: a device-state answer without its request id', function () {
  this.timeout(60_000);
  const w = behindRewritingProxy(memoryStore);

  beforeEach(async () => {
    await setFaults(w.emu, { processingSeconds: 30 });
    w.rewrite = (_method, path, body) => {
      if (!path.endsWith('/devices/actions/suspend')) return undefined;
      const { requestId: _, ...rest } = body as Json;
      return rest;
    };
  });

  async function suspend(ids: string[]) {
    const t0 = w.emu.now();
    const summary = await w.run(
      suspendYaml('no-request-id', w.account, ids, 'confirm: { timeout: 10m, pollInterval: 5s }'),
    );
    const rows = await w.ledger(summary.runId);
    expect(w.proxy.rewritten).to.be.greaterThan(0);
    return { summary, rows, waitedMs: w.emu.now() - t0 };
  }

  /** The first device of the account in `state`. */
  const oneIn = async (state: string) =>
    imei((await accountDevices(w.emu, w.account)).find((d) => d.state === state)!);

  it('reads the devices until each is changed, and no longer', async () => {
    const active = w.active.slice(0, 2);
    const { summary, rows, waitedMs } = await suspend(active);
    expect(summary.status).to.equal('failed');
    expect(summary.steps[0]?.error).to.match(
      /devices\.suspend: the service's answer is refused: it has no requestId/,
    );
    expect(rows).to.deep.equal(active.map((id) => [id, 'succeeded', undefined, undefined]));
    expect(summary.steps[0]?.confirmation).to.deep.include({ stateRead: 2 });
    // Ended once the carrier had carried it out (30 simulated seconds), not at the confirmation time.
    expect(waitedMs).to.be.lessThan(TIMEOUT_MS);
    expect((await calls(w.emu)).actions['devices.suspend']).to.equal(1);
  });

  it('leaves a device its state never shows changed unconfirmed at the confirmation time, not sent again', async () => {
    const active = w.active.slice(0, 2);
    const deactive = await oneIn('deactive');
    const { summary, rows, waitedMs } = await suspend([...active, deactive]);
    expect(rows).to.deep.equal([
      ...active.map((id) => [id, 'succeeded', undefined, undefined]),
      [deactive, 'unconfirmed', 'MALFORMED ANSWER', undefined],
    ]);
    expect(summary.status).to.equal('failed');
    expect(summary.steps[0]?.devices).to.include({ succeeded: 2, unconfirmed: 1 });
    expect(waitedMs).to.be.at.least(TIMEOUT_MS);
    expect((await calls(w.emu)).actions['devices.suspend']).to.equal(1);
  });
});
