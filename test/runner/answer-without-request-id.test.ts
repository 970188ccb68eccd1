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
import { createClient, type Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import { startRewritingProxy, type RewritingProxy } from '../helpers/rewriting-proxy.js';
import {
  accountDevices,
  calls,
  emulator,
  emulatorClock,
  imei,
  memoryStore,
  playbook,
  RATES,
  setFaults,
  type Json,
} from './helpers.js';

const TIMEOUT_MS = 10 * 60_000;

describe('runner: a device-state answer without its request id', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let proxy: RewritingProxy;
  let client: Client;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 40 });
    proxy = await startRewritingProxy(emu.url, (method, path, body) => {
      if (!path.endsWith('/devices/actions/suspend')) return undefined;
      const { requestId: _, ...rest } = body as Json;
      return rest;
    });
  });
  after(async () => {
    await proxy?.close();
    await emu?.close();
  });
  beforeEach(async () => {
    emu.reset({ devicesPerAccount: 40 });
    await setFaults(emu, { processingSeconds: 30 });
    client = createClient({
      baseUrl: `${proxy.url}/api`,
      clientId: emu.defaults.clientId,
      clientSecret: emu.defaults.clientSecret,
      username: emu.defaults.username,
      password: emu.defaults.password,
      rates: RATES,
    });
  });
  afterEach(() => client.close());

  async function suspend(ids: string[]) {
    const account = emu.defaults.accounts[0]!;
    const store = memoryStore();
    const t0 = emu.now();
    const summary = await runPlaybook(
      playbook(`
version: 1
name: no-request-id
on: { manual: true }
steps:
  - id: it
    uses: devices.suspend
    with: { accountName: "${account}", devices: [${ids.map((id) => `{ id: "${id}", kind: imei }`).join(', ')}] }
    confirm: { timeout: 10m, pollInterval: 5s }
`),
      { client, store, clock: emulatorClock(emu) },
    );
    const rows = (await store.deviceResults(summary.runId, 'it')).map((r) => [
      r.deviceId,
      r.outcome,
      r.errorType,
      r.requestId,
    ]);
    await store.close();
    expect(proxy.rewritten).to.be.greaterThan(0);
    return { summary, rows, waitedMs: emu.now() - t0 };
  }

  const devices = async (state: string, n: number) =>
    (await accountDevices(emu, emu.defaults.accounts[0]!))
      .filter((d) => d.state === state)
      .slice(0, n)
      .map(imei);

  it('reads the devices until each is changed, and no longer', async () => {
    const active = await devices('active', 2);
    const { summary, rows, waitedMs } = await suspend(active);
    expect(summary.status).to.equal('failed');
    expect(summary.steps[0]?.error).to.match(
      /devices\.suspend: the service's answer is refused: it has no requestId/,
    );
    expect(rows).to.deep.equal(active.map((id) => [id, 'succeeded', undefined, undefined]));
    expect(summary.steps[0]?.confirmation).to.deep.include({ stateRead: 2 });
    // Ended once the carrier had carried it out (30 simulated seconds), not at the confirmation time.
    expect(waitedMs).to.be.lessThan(TIMEOUT_MS);
    expect((await calls(emu)).actions['devices.suspend']).to.equal(1);
  });

  it('leaves a device its state never shows changed unconfirmed at the confirmation time, not sent again', async () => {
    const active = await devices('active', 2);
    const [deactive] = await devices('deactive', 1);
    const { summary, rows, waitedMs } = await suspend([...active, deactive!]);
    expect(rows).to.deep.equal([
      ...active.map((id) => [id, 'succeeded', undefined, undefined]),
      [deactive, 'unconfirmed', 'MALFORMED ANSWER', undefined],
    ]);
    expect(summary.status).to.equal('failed');
    expect(summary.steps[0]?.devices).to.include({ succeeded: 2, unconfirmed: 1 });
    expect(waitedMs).to.be.at.least(TIMEOUT_MS);
    expect((await calls(emu)).actions['devices.suspend']).to.equal(1);
  });
});
