/**
 * Cancelling calls, against the emulator over loopback: a call's signal ends its request in flight at once, with
 * FB_ABORTED, whatever the service still takes; the other calls under other signals go on; however many
 * requests are in flight under one signal, it holds one listener of the client's; a call under a signal
 * already aborted is not sent. A call cancelled says whether its request may have reached the service (`sent`): one
 * cut off while it waited for a connection was not written, though undici hands it to the connection to fail it
 * (before, it said so as one the service had read: a cancelled device action's devices were recorded as if it had).
 */
import { getEventListeners } from 'node:events';
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { Pool } from 'undici';
import { AbortedError, FleetbookError } from '../../src/errors.js';
import { clientFor, emulator, onRequestRead, setFaults } from '../runner/helpers.js';

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

  it('a call cancelled says whether its request may have reached the service', async () => {
    // One connection: a request the emulator has read holds it for its latency, and the next waits in the pool.
    const pool = new Pool(new URL(emu.baseUrl).origin, { connections: 1, pipelining: 1 });
    const one = clientFor(emu, { dispatcher: pool });
    try {
      const list = { accountName: account, maxNumberOfDevices: 2000 };
      await one.callByName('devices.list', list);
      await setFaults(emu, { latencyMs: 1500 });
      const read = new AbortController();
      const queued = new AbortController();
      const failure = (signal: AbortSignal) =>
        one.callByName('devices.list', list, { signal }).then(
          () => undefined,
          (e: unknown) => e,
        );
      const held = onRequestRead(emu, '/m2m/v1/devices/actions/list', 1, () => undefined);
      const inFlight = failure(read.signal);
      const waiting = failure(queued.signal);
      await held;
      expect(pool.stats).to.include({ running: 1, queued: 1 });
      queued.abort();
      read.abort();
      const [sent, unsent] = [await inFlight, await waiting];
      expect(sent).to.be.instanceOf(AbortedError);
      expect(unsent).to.be.instanceOf(AbortedError);
      expect([(sent as AbortedError).sent, (unsent as AbortedError).sent]).to.deep.equal([true, false]);
      expect((unsent as AbortedError).toJSON()).to.deep.include({ code: 'FB_ABORTED', sent: false });
    } finally {
      await one.close();
      await pool.close();
    }
  });

  it('tells a request as sent when it leaves its rate slot, not one cancelled while it waited for it', async () => {
    await setFaults(emu, { latencyMs: 300 });
    const one = { requestsPerSecond: 100, concurrency: 1 };
    const narrow = clientFor(emu, { rates: { m2m: one, loc: one, subsc: one, dm: one, oauth: one } });
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
