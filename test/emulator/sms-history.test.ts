/**
 * Mobile-originated SMS over loopback: the history of the last 7 days, 100 an answer continued by the `next`
 * token; the same seed gives the same messages; time brings new ones and retires old ones; once callbacks are
 * started, each message goes once to the EnhancedConnectivityService listener, those already kept at once and
 * later ones as simulated time reaches them.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { SMS_PAGE } from '../../src/emulator/sms-history.js';
import { clientFor, emulator, Listener, Raw, world, type Json } from './helpers.js';

describe('emulator: mobile-originated SMS', () => {
  let emu: Emulator;
  let client: Client;
  let raw: Raw;
  let account: string;
  let listener: Listener;

  before(async () => {
    emu = await emulator({ seed: 'sms', devicesPerAccount: 1000 });
    client = clientFor(emu);
    raw = new Raw(emu);
  });
  beforeEach(async () => {
    emu.reset({ seed: 'sms', devicesPerAccount: 1000 });
    account = (await world(raw, 0)).accounts[0]!.accountName;
    listener = await new Listener().start();
  });
  afterEach(async () => {
    await emu.callbacksIdle();
    await listener.close();
  });
  after(async () => {
    await client.close();
    await emu.close();
  });

  const history = async () => (await client.sms.history({ accountName: account })).messages;
  /** The times of the messages received, in order (deliveries run side by side and arrive in any order). */
  const received = () =>
    listener.received
      .map((m) => ((m.body.deviceResponse as Json).smsResponse as Json).timestamp as string)
      .sort();

  it('lists the last 7 days, oldest first, 100 an answer with the next token, the same for the same seed', async () => {
    const first = await raw.api('GET', `/m2m/v1/sms/${account}/history`);
    expect(first.status).to.equal(202);
    expect(first.headers.location).to.equal(`/api/m2m/v1/sms/${account}/history?next=${SMS_PAGE}`);
    expect((first.body as { messages: unknown[] }).messages).to.have.length(SMS_PAGE);
    const all = await history();
    expect(all.length).to.be.greaterThan(SMS_PAGE);
    const times = all.map((m) => m.timestamp!);
    expect(times).to.deep.equal([...times].sort());
    expect(times[0]! > '2025-12-29T00:00:00.000Z' && times.at(-1)! <= '2026-01-05T00:00:00.000Z').to.equal(
      true,
    );
    for (const m of all) expect(m.deviceIds!.map((x) => x.kind)).to.deep.equal(['imei', 'mdn']);
    emu.reset({ seed: 'sms', devicesPerAccount: 1000 });
    expect(await history()).to.deep.equal(all);
  });

  it('moves with simulated time: a day brings new messages and retires the oldest', async () => {
    const before = await history();
    emu.advance(86_400);
    const after = await history();
    expect(after[0]!.timestamp! > '2025-12-30T00:00:00.000Z').to.equal(true);
    expect(after.at(-1)!.timestamp! > '2026-01-05T00:00:00.000Z').to.equal(true);
    // What both windows hold is the same.
    const shared = (m: { timestamp?: string }) =>
      m.timestamp! > '2025-12-30T00:00:00.000Z' && m.timestamp! <= '2026-01-05T00:00:00.000Z';
    expect(after.filter(shared)).to.deep.equal(before.filter(shared));
  });

  it('startCallbacks sends each message once: those kept at once, later ones as time reaches them', async () => {
    await client.callbacks.register({
      accountName: account,
      name: 'EnhancedConnectivityService',
      url: listener.url,
    });
    const kept = await history();
    expect(await client.sms.startCallbacks({ accountName: account })).to.deep.equal({ success: true });
    await listener.waitFor(kept.length);
    expect(received()).to.deep.equal(kept.map((m) => m.timestamp));
    // Starting again sends nothing again.
    await client.sms.startCallbacks({ accountName: account });
    emu.advance(86_400);
    const later = (await history()).filter((m) => m.timestamp! > '2026-01-05T00:00:00.000Z');
    expect(later.length).to.be.greaterThan(0);
    await listener.waitFor(kept.length + later.length);
    await emu.callbacksIdle();
    expect(received()).to.deep.equal([...kept, ...later].map((m) => m.timestamp));
    const one = listener.received.find(
      (m) => ((m.body.deviceResponse as Json).smsResponse as Json).timestamp === kept[0]!.timestamp,
    )!.body;
    expect(one.deviceIds).to.deep.equal(kept[0]!.deviceIds);
    expect((one.deviceResponse as Json).smsResponse).to.deep.equal({
      accountName: account,
      message: kept[0]!.message,
      timestamp: kept[0]!.timestamp,
    });
  });

  it('startCallbacks without a listener sends nothing, then what is due once one is registered', async () => {
    expect(await client.sms.startCallbacks({ accountName: account })).to.deep.equal({ success: true });
    await client.callbacks.register({
      accountName: account,
      name: 'EnhancedConnectivityService',
      url: listener.url,
    });
    emu.advance(86_400);
    const later = (await history()).filter((m) => m.timestamp! > '2026-01-05T00:00:00.000Z');
    await listener.waitFor(later.length);
    await emu.callbacksIdle();
    expect(received()).to.deep.equal(later.map((m) => m.timestamp));
  });
});
