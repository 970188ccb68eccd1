/**
 * A device-state call that never reached the service against one whose answer was lost. Never sent (the port
 * refused the connection, or the server reset it as the TLS handshake began, before a byte of the request could
 * be written): the service cannot have acted, so its devices are `failed` (NETWORK) at once, not read until the
 * confirmation time and left `unconfirmed`, and the step's `retry:` sends the request again. Sent with no answer
 * (the emulator resets the connection after it acted): what the service did is read back from the devices.
 *
 * The real emulator behind a loopback front door (test/helpers/front-door.ts) that refuses when told to.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { createClient, type Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { RunSummary } from '../../src/store/store.js';
import { startFrontDoor, type FrontDoor } from '../helpers/front-door.js';
import { makeCerts, type TestCerts } from '../helpers/tls-certs.js';
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
} from './helpers.js';

describe('runner: a device-state call never sent, and one whose answer was lost', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let certs: TestCerts;
  let door: FrontDoor;
  let pool: Pool;
  let client: Client;
  let account: string;
  let active: string[];
  /** Done to the front door as the suspend is called, after the listing step has logged in. */
  let onSuspend: (() => Promise<void>) | undefined;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 20 });
    certs = makeCerts();
  });
  after(async () => {
    await emu?.close();
    certs?.remove();
  });
  afterEach(async () => {
    await client.close();
    await pool.close();
    await door.close();
  });

  async function through(o: { tls: boolean }): Promise<void> {
    emu.reset({ devicesPerAccount: 20 });
    account = emu.defaults.accounts[0]!;
    active = (await accountDevices(emu, account))
      .filter((d) => d.state === 'active')
      .slice(0, 2)
      .map(imei);
    door = await startFrontDoor(
      emu.url,
      o.tls
        ? { key: readFileSync(certs.serverKey, 'utf8'), cert: readFileSync(certs.serverCert, 'utf8') }
        : undefined,
    );
    // A connection per request: the next request after a door's change meets it, none goes on one kept alive.
    pool = new Pool(door.url, { pipelining: 0, connect: { ca: readFileSync(certs.ca, 'utf8') } });
    client = createClient({
      baseUrl: `${door.url}/api`,
      clientId: emu.defaults.clientId,
      clientSecret: emu.defaults.clientSecret,
      username: emu.defaults.username,
      password: emu.defaults.password,
      rates: RATES,
      dispatcher: pool,
      retry: { maxAttempts: 1 },
    });
    onSuspend = undefined;
    const call = client.callByName.bind(client);
    client.callByName = async (name, input, opts) => {
      if (name === 'devices.suspend' && onSuspend) {
        const once = onSuspend;
        onSuspend = undefined;
        await once();
      }
      return call(name, input, opts);
    };
  }

  const run = async (retry = '') => {
    const store = memoryStore();
    const summary = await runPlaybook(
      playbook(`
version: 1
name: never-sent
on: { manual: true }
steps:
  - id: look
    uses: devices.list
    with: { accountName: "${account}", maxNumberOfDevices: 500 }
  - id: it
    uses: devices.suspend
    with: { accountName: "${account}", devices: [${active.map((id) => `{ id: "${id}", kind: imei }`).join(', ')}] }
    confirm: { timeout: 1m, pollInterval: 5s }
    ${retry}
`),
      { client, store, clock: emulatorClock(emu) },
    );
    const rows = (await store.deviceResults(summary.runId, 'it')).map((r) => [
      r.deviceId,
      r.outcome,
      r.errorType,
    ]);
    await store.close();
    return { summary, rows };
  };
  const it_ = (s: RunSummary) => s.steps.find((x) => x.id === 'it')!;

  it('a closed port: the devices failed with NETWORK at once, nothing read back', async () => {
    await through({ tls: false });
    onSuspend = () => door.refuse();
    const { summary, rows } = await run();
    expect(summary.status).to.equal('failed');
    expect(it_(summary).error).to.match(/ECONNREFUSED/);
    expect(rows).to.deep.equal(active.map((id) => [id, 'failed', 'NETWORK']));
    const seen = await calls(emu);
    expect(seen.actions['devices.suspend'] ?? 0).to.equal(0);
    // The listing step's one read: none to reconcile a request the service never had.
    expect(seen.actions['devices.list']).to.equal(1);
  });

  it('a connection reset as its TLS handshake began: failed with NETWORK at once, nothing read back', async () => {
    await through({ tls: true });
    onSuspend = async () => door.resetHandshakes(1);
    const { summary, rows } = await run();
    expect(door.reset).to.equal(1);
    expect(summary.status).to.equal('failed');
    expect(it_(summary).error).to.match(/ECONNRESET/);
    expect(rows).to.deep.equal(active.map((id) => [id, 'failed', 'NETWORK']));
    const seen = await calls(emu);
    expect(seen.actions['devices.suspend'] ?? 0).to.equal(0);
    expect(seen.actions['devices.list']).to.equal(1);
  });

  it("a call never sent is sent again by the step's retry", async () => {
    await through({ tls: true });
    onSuspend = async () => door.resetHandshakes(1);
    const { summary, rows } = await run('retry: { on: [network], maxAttempts: 2, delay: 1s }');
    expect(door.reset).to.equal(1);
    expect(summary.status, summary.error).to.equal('succeeded');
    expect(rows).to.deep.equal(active.map((id) => [id, 'succeeded', undefined]));
    expect(it_(summary).attempts).to.equal(2);
    expect((await calls(emu)).actions['devices.suspend']).to.equal(1);
  });

  it('an answer lost after the service acted stays in doubt: read back, not failed, not sent again', async () => {
    await through({ tls: true });
    await setFaults(emu, { resetNext: { 'devices.suspend': 1 } });
    const { summary, rows } = await run('retry: { on: [network], maxAttempts: 2, delay: 1s }');
    expect(summary.status, summary.error).to.equal('succeeded');
    expect(rows).to.deep.equal(active.map((id) => [id, 'succeeded', undefined]));
    expect(it_(summary).confirmation).to.include({ stateRead: 2 });
    expect((await calls(emu)).actions['devices.suspend']).to.equal(1);
  });
});
