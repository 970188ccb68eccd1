/**
 * A device-state action answered 2xx without a request id: a device action answers `{ requestId }`, and without
 * one the request cannot be followed. Its devices' state was read back (those changed succeed), but those never
 * read changed ended `unconfirmed` with no error type, and the step succeeded; an answer whose request id has a
 * NUL, which cannot be followed either, gave them `MALFORMED ANSWER` and failed the step. Both now go the same
 * way: read back, the others `unconfirmed` (`MALFORMED ANSWER`), the request sent once, and the step fails saying
 * why (docs/spec-decisions.md, "Asynchronous requests").
 *
 * The real emulator does the work; a proxy in front of it rewrites its answer (test/helpers).
 */
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { RunSummary, Store } from '../../src/store/store.js';
import { startRewritingProxy, type Rewrite, type RewritingProxy } from '../helpers/rewriting-proxy.js';
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

describe('runner: a device-state answer without a usable request id', function () {
  this.timeout(30_000);
  let emu: Emulator;
  let proxy: RewritingProxy;
  let client: Client;
  let store: Store;
  let account: string;
  let active: string[];
  let rewrite: Rewrite = () => undefined;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 20 });
    proxy = await startRewritingProxy(emu.url, (...a) => rewrite(...a));
  });
  after(async () => {
    await proxy.close();
    await emu.close();
  });
  beforeEach(async () => {
    emu.reset({ devicesPerAccount: 20 });
    account = emu.defaults.accounts[0]!;
    active = (await accountDevices(emu, account))
      .filter((d) => d.state === 'active')
      .slice(0, 3)
      .map(imei);
    client = createClient({
      baseUrl: `${proxy.url}/api`,
      clientId: emu.defaults.clientId,
      clientSecret: emu.defaults.clientSecret,
      username: emu.defaults.username,
      password: emu.defaults.password,
      rates: RATES,
    });
    store = memoryStore();
  });
  afterEach(() => client.close());

  /** A suspend of the three devices, the carrier never carrying it out for the third, its answer rewritten. */
  async function suspend(answer: (body: Json) => Json): Promise<RunSummary> {
    await setFaults(emu, { neverFinishDevices: [active[2]!] });
    rewrite = (_method, path, body) =>
      path.endsWith('/devices/actions/suspend') ? answer(body as Json) : undefined;
    const devices = `[${active.map((id) => `{ id: "${id}", kind: imei }`).join(', ')}]`;
    return runPlaybook(
      playbook(`
version: 1
name: no-request-id
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: it
    uses: devices.suspend
    with: { accountName: "\${{ inputs.account }}", devices: ${devices} }
    confirm: { timeout: 2s, pollInterval: 100ms }
`),
      { client, store, inputs: { account }, clock: emulatorClock(emu) },
    );
  }

  const ledger = async (s: RunSummary) =>
    (await store.deviceResults(s.runId, 'it')).map((r) => [r.deviceId, r.outcome, r.errorType, r.requestId]);

  for (const [what, answer, says] of [
    ['no request id', ({ requestId: _, ...rest }: Json) => rest, /no requestId/],
    ['an empty request id', (body: Json) => ({ ...body, requestId: '' }), /no requestId/],
    ['a request id with a NUL', (body: Json) => ({ ...body, requestId: 'r\0x' }), /NUL character/],
  ] as const)
    it(`${what}: read back, the others unconfirmed (MALFORMED ANSWER), sent once, the step failed`, async () => {
      const s = await suspend(answer);
      expect(proxy.rewritten, 'answers rewritten').to.be.greaterThan(0);
      expect(s.status).to.equal('failed');
      const step = s.steps[0]!;
      expect(step.status).to.equal('failed');
      expect(step.error).to.include("devices.suspend: the service's answer is refused");
      expect(step.error).to.match(says);
      expect(await ledger(s)).to.deep.equal([
        [active[0], 'succeeded', undefined, undefined],
        [active[1], 'succeeded', undefined, undefined],
        [active[2], 'unconfirmed', 'MALFORMED ANSWER', undefined],
      ]);
      expect(step.devices.byError).to.deep.equal({ 'MALFORMED ANSWER': 1 });
      expect((await calls(emu)).actions['devices.suspend'], 'suspends sent').to.equal(1);
    });
});
