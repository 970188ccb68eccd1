/**
 * A 429 with `Retry-After` pauses the area for that long and halves its rate; the retry waits at least the
 * delay asked for, given in seconds or as an HTTP date. All on a virtual clock: nothing sleeps for real.
 */
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import { VirtualClock } from '../../src/clock.js';
import { ApiError } from '../../src/errors.js';
import { Recorder } from '../helpers/recorder.js';

const ACC = '0000123456-00001';
const LOCATE = 'POST /api/loc/v1/locations';
const locate = { accountName: ACC, deviceList: [{ id: '353456789012345', kind: 'imei' }] };
const RATE = 10;

describe('429 with Retry-After', () => {
  let rec: Recorder;
  let clock: VirtualClock;
  let client: Client;
  /** Virtual time at which the server received each request to /locations. */
  let seen: number[];

  beforeEach(async () => {
    rec = await Recorder.start();
    clock = new VirtualClock();
    seen = [];
    client = createClient({
      baseUrl: rec.baseUrl,
      ...rec.credentials,
      clock,
      // The largest jitter, so that only Retry-After can explain a wait of a second or more.
      random: () => 0,
      rates: { loc: { requestsPerSecond: RATE, concurrency: 4 } },
    });
    // Token and session first, so that the clock readings below are about the call alone.
    await client.session.logout({});
  });
  afterEach(async () => {
    await client.close();
    await rec.close();
  });

  function scriptLocate(...statuses: { status: number; headers?: Record<string, string> }[]) {
    const answers = [...statuses];
    rec.handle(LOCATE, () => {
      seen.push(clock.now());
      const a = answers.shift() ?? { status: 200 };
      return a.status === 200
        ? { status: 200, body: [] }
        : { ...a, body: { errorCode: 'TOO_MANY_REQUESTS', errorMessage: 'Too many requests' } };
    });
  }

  it('Retry-After: 1 makes the retry wait at least 1000 ms and the area slow down', async () => {
    scriptLocate({ status: 429, headers: { 'retry-after': '1' } });
    expect(client.areas.loc.currentRate).to.equal(RATE);
    const sleepsBefore = clock.sleeps.length;

    const res = await client.location.locate(locate);

    expect(res).to.deep.equal([]);
    expect(seen).to.have.length(2);
    expect(seen[1]! - seen[0]!, 'virtual time between the 429 and the retry').to.be.at.least(1000);
    const sleeps = clock.sleeps.slice(sleepsBefore);
    expect(Math.max(...sleeps), 'a sleep of at least Retry-After').to.be.at.least(1000);
    expect(client.areas.loc.currentRate, 'the area slowed down').to.be.below(RATE);
    expect(client.areas.loc.currentRate).to.equal(RATE / 2);
    expect(client.areas.loc.stats.throttled).to.equal(1);
    expect(client.stats.retries).to.equal(1);
  });

  it('Retry-After as an HTTP date: the retry waits until that date', async () => {
    let until = 0;
    rec.handle(LOCATE, () => {
      seen.push(clock.now());
      if (seen.length > 1) return { status: 200, body: [] };
      // HTTP dates have a resolution of a second: the next whole second, plus 3.
      until = Math.ceil(clock.now() / 1000) * 1000 + 3000;
      return {
        status: 429,
        headers: { 'retry-after': new Date(until).toUTCString() },
        body: { errorCode: 'TOO_MANY_REQUESTS', errorMessage: 'Too many requests' },
      };
    });

    await client.location.locate(locate);

    expect(seen).to.have.length(2);
    expect(seen[1]!, 'retried no earlier than the date').to.be.at.least(until);
    expect(seen[1]! - seen[0]!).to.be.at.least(3000);
    expect(client.areas.loc.currentRate).to.be.below(RATE);
  });

  it('the pause holds back every request of the area, and no other area', async () => {
    scriptLocate({ status: 429, headers: { 'retry-after': '2' } });
    let statusAt = 0;
    let listAt = 0;
    rec.handle(/^GET \/api\/loc\/v1\/locationreports\//, () => {
      statusAt = clock.now();
      return { status: 200, body: { txid: 't', status: 'QUEUED' } };
    });
    rec.handle(/^GET \/api\/m2m\/v1\/callbacks\//, () => {
      listAt = clock.now();
      return { status: 200, body: [] };
    });

    // The 429 first, then one more call in the same area and one in another.
    const first = client.location.locate(locate);
    while (seen.length === 0) await new Promise((r) => setImmediate(r));
    while (client.areas.loc.stats.throttled === 0) await new Promise((r) => setImmediate(r));
    const pausedAt = seen[0]!;
    const m2mWaitedBefore = client.areas.m2m.stats.waitedMs;
    await Promise.all([
      first,
      client.location.getReportStatus({ accountName: ACC, txid: 't' }),
      client.callbacks.list({ accountName: ACC }),
    ]);

    expect(statusAt - pausedAt, 'the same area waits for Retry-After').to.be.at.least(2000);
    expect(client.areas.loc.stats.waitedMs).to.be.at.least(2000);
    // Virtual time moves for everyone while the pause sleeps, so the other area is judged by its own gate:
    // it waited no more than its ordinary spacing, nowhere near the pause.
    expect(listAt).to.be.greaterThan(0);
    expect(client.areas.m2m.stats.waitedMs - m2mWaitedBefore, 'another area is not paused').to.be.below(200);
  });

  it('a 429 on a mutating call (devices.suspend) is retried: the service did not act', async () => {
    rec.enqueue(
      'POST /api/m2m/v1/devices/actions/suspend',
      {
        status: 429,
        headers: { 'retry-after': '1' },
        body: { errorCode: 'TOO_MANY_REQUESTS', errorMessage: 'x' },
      },
      { status: 200, body: { requestId: 'r-1' } },
    );
    const res = await client.devices.suspend({
      accountName: ACC,
      devices: [{ id: '353456789012345', kind: 'imei' }],
    });
    expect(res).to.deep.equal({ requestId: 'r-1' });
    expect(rec.requestsTo('/api/m2m/v1/devices/actions/suspend')).to.have.length(2);
    expect(client.areas.m2m.currentRate).to.be.below(20);
  });

  it('a Retry-After of a day is not waited for: the call fails at once, the area pauses 5 minutes at most', async () => {
    scriptLocate({ status: 429, headers: { 'retry-after': '86400' } });
    const failedAt = clock.now();
    let err: unknown;
    try {
      await client.location.locate(locate);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ApiError);
    expect((err as ApiError).status).to.equal(429);
    expect((err as ApiError).retryAfterMs).to.equal(86_400_000);
    expect(seen, 'not retried').to.have.length(1);
    expect(client.stats.retries).to.equal(0);

    // The next call of the area waits out the capped pause, not the day.
    await client.location.locate(locate);
    expect(seen).to.have.length(2);
    expect(seen[1]! - failedAt).to.be.at.least(5 * 60_000);
    expect(seen[1]! - failedAt).to.be.below(6 * 60_000);
  });

  it('a 429 on every attempt ends with the 429 as a retryable ApiError after maxAttempts', async () => {
    rec.handle(LOCATE, () => {
      seen.push(clock.now());
      return {
        status: 429,
        headers: { 'retry-after': '1' },
        body: { errorCode: '429', errorMessage: 'Too many' },
      };
    });
    let err: unknown;
    try {
      await client.location.locate(locate);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ApiError);
    expect((err as ApiError).status).to.equal(429);
    expect((err as ApiError).retryClass).to.equal('retryable');
    expect((err as ApiError).retryAfterMs).to.equal(1000);
    expect(seen).to.have.length(5);
    for (let i = 1; i < seen.length; i++) expect(seen[i]! - seen[i - 1]!).to.be.at.least(1000);
    // Halved at most once per 1,010 ms window: 429s a second apart may share a window. Never below the floor.
    expect(client.areas.loc.currentRate).to.be.at.most(RATE / 2 ** 3);
    expect(client.areas.loc.currentRate).to.be.at.least(Math.max(1, RATE / 2 ** 5));
  });
});
