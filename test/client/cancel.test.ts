/**
 * Cancelling calls, against the emulator over loopback: a call's signal ends its request in flight at once, with
 * FB_ABORTED, whatever the service still takes; the other calls under other signals go on; however many
 * requests are in flight under one signal, it holds one listener of the client's; a call under a signal
 * already aborted is not sent.
 */
import { getEventListeners } from 'node:events';
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { FleetbookError } from '../../src/errors.js';
import { clientFor, emulator, setFaults } from '../runner/helpers.js';

describe('client: cancelling calls', function () {
  this.timeout(20_000);
  let emu: Emulator;
  let client: Client;
  let account: string;

  before(async () => {
    emu = await emulator();
    account = emu.defaults.accounts[0] as string;
    client = clientFor(emu);
    // Log in first: the calls below then meet the latency only on their own request.
    await client.callByName('devices.list', { accountName: account, maxNumberOfDevices: 1 });
  });
  after(async () => {
    await client.close();
    await emu.close();
  });
  afterEach(async () => setFaults(emu, {}));

  it('a signal ends its requests in flight at once; calls under another signal go on', async () => {
    await setFaults(emu, { latencyMs: 1500 });
    const stop = new AbortController();
    const other = new AbortController();
    const began = Date.now();
    const cancelled = Array.from({ length: 5 }, () =>
      client.callByName('devices.list', { accountName: account }, { signal: stop.signal }).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    let answered = false;
    const going = client
      .callByName('devices.list', { accountName: account }, { signal: other.signal })
      .finally(() => (answered = true));
    await new Promise((r) => setTimeout(r, 100));
    // Five requests in flight under `stop`, one listener on it.
    expect(getEventListeners(stop.signal, 'abort')).to.have.length(1);
    stop.abort();
    for (const e of await Promise.all(cancelled)) {
      expect(e).to.be.instanceOf(FleetbookError);
      expect((e as FleetbookError).code).to.equal('FB_ABORTED');
    }
    // Ended before the answers came: the call under the other signal, sent with them, has not had its own.
    expect(answered, 'cancelled before the answers came').to.equal(false);
    const listed = (await going) as { devices: unknown[] };
    expect(listed.devices.length).to.be.greaterThan(0);
    expect(Date.now() - began).to.be.at.least(1400);
  });

  it('tells a request as sent when it leaves its rate slot, not one cancelled while it waited for it', async () => {
    await setFaults(emu, { latencyMs: 300 });
    const one = { requestsPerSecond: 100, concurrency: 1 };
    const narrow = createClient({
      baseUrl: emu.baseUrl,
      clientId: emu.defaults.clientId,
      clientSecret: emu.defaults.clientSecret,
      username: emu.defaults.username,
      password: emu.defaults.password,
      rates: { m2m: one, loc: one, subsc: one, dm: one, oauth: one },
    });
    try {
      // Logged in first: the calls below wait only for each other.
      await narrow.callByName('devices.list', { accountName: account });
      const told = { first: 0, waiting: 0 };
      const stop = new AbortController();
      const first = narrow.callByName(
        'devices.list',
        { accountName: account },
        { onRequest: () => told.first++ },
      );
      const waiting = narrow
        .callByName(
          'devices.list',
          { accountName: account },
          { signal: stop.signal, onRequest: () => told.waiting++ },
        )
        .catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 100));
      stop.abort();
      // Cancelled before it was sent: it fails with the signal's reason, as a call under a signal aborted already.
      expect(await waiting).to.equal(stop.signal.reason);
      await first;
      expect(told).to.deep.equal({ first: 1, waiting: 0 });
    } finally {
      await narrow.close();
    }
  });

  it("a call under a signal already aborted is not sent: it fails with the signal's reason", async () => {
    const stop = new AbortController();
    const reason = new Error('the run was cancelled');
    stop.abort(reason);
    const before = client.stats.requests['devices.list'] ?? 0;
    const e = await client.callByName('devices.list', { accountName: account }, { signal: stop.signal }).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).to.equal(reason);
    expect(client.stats.requests['devices.list'] ?? 0).to.equal(before);
  });
});
