/**
 * The control API refuses what it cannot do, saying what it takes, and stays usable: real HTTP to an emulator on
 * a loopback port.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { emulator, Raw } from './helpers.js';

describe('emulator control API: bad input', () => {
  let emu: Emulator;
  let raw: Raw;

  beforeEach(async () => {
    emu = await emulator();
    raw = new Raw(emu);
  });
  afterEach(() => emu.close());

  it('refuses an advance that would take the clock past 9999-12-31, and keeps its time', async () => {
    const before = (await raw.send('GET', '/_emulator/clock')).body as { now: string };
    // 1e308 seconds walked the days up to an infinite time until the process ran out of memory; 8e12 left the
    // clock past the last time a Date holds, so that every later call failed with 500.
    for (const seconds of [1e308, 8e12, 1e12]) {
      const r = await raw.send('POST', '/_emulator/clock/advance', { seconds });
      expect(r.status, String(seconds)).to.equal(400);
      expect((r.body as { error: string }).error).to.match(
        /^seconds must be a number from 0 to \d+: the clock goes no further than 9999-12-31T23:59:59\.999Z/,
      );
    }
    expect((await raw.send('GET', '/_emulator/clock')).body).to.deep.include(before);
    const r = await raw.send('POST', '/_emulator/clock/advance', { seconds: 86_400 });
    expect(r.status).to.equal(200);
  });

  it('refuses a timeScale above 1000000, in PUT /clock and in /reset', async () => {
    for (const [method, path] of [
      ['PUT', '/_emulator/clock'],
      ['POST', '/_emulator/reset'],
    ] as const) {
      const r = await raw.send(method, path, { timeScale: 1e308 });
      expect(r.status, path).to.equal(400);
      expect((r.body as { error: string }).error, path).to.equal(
        'timeScale must be a number from 0 to 1000000 (e.g. 60 or 0.5), got 1e+308',
      );
    }
    const clock = await raw.send('GET', '/_emulator/clock');
    expect(clock.status).to.equal(200);
    expect((clock.body as { timeScale: number }).timeScale).to.equal(0);
  });

  it('refuses a query parameter given twice or empty, and an account it does not have', async () => {
    const answers: Record<string, [number, unknown]> = {};
    for (const path of [
      // 500 "id.toUpperCase is not a function".
      '/calls?device=x&device=y',
      // These two answered every account's fields with no account: a test reading them found none.
      '/accounts?account=a&account=b&devices=0',
      '/accounts?account=0000000000-00009&devices=0',
      '/accounts?account=',
      '/requests?account=a&account=b',
      '/requests?limit=1&limit=2',
    ]) {
      const r = await raw.send('GET', `/_emulator${path}`);
      answers[path] = [r.status, r.body];
    }
    expect(answers).to.deep.equal({
      '/calls?device=x&device=y': [400, { error: 'device is given 2 times: give it once' }],
      '/accounts?account=a&account=b&devices=0': [400, { error: 'account is given 2 times: give it once' }],
      '/accounts?account=0000000000-00009&devices=0': [
        404,
        {
          error:
            'no account "0000000000-00009": this world has 0000123456-00001, 0000123456-00002, 0000123456-00003',
        },
      ],
      '/accounts?account=': [400, { error: 'account is empty: give it a value, or leave it out' }],
      '/requests?account=a&account=b': [400, { error: 'account is given 2 times: give it once' }],
      '/requests?limit=1&limit=2': [400, { error: 'limit is given 2 times: give it once' }],
    });
    const one = await raw.send('GET', '/_emulator/accounts?account=0000123456-00002&devices=0');
    expect(
      (one.body as { accounts: { accountName: string }[] }).accounts.map((a) => a.accountName),
    ).to.deep.equal(['0000123456-00002']);
  });

  it('every control route refuses a query parameter it does not take, one given twice, and one empty', async () => {
    // Each route with the query parameters it takes.
    const ROUTES: [string, string, string[]][] = [
      ['POST', '/reset', []],
      ['GET', '/accounts', ['devices', 'account']],
      ['PUT', '/faults', []],
      ['GET', '/faults', []],
      ['POST', '/clock/advance', []],
      ['GET', '/clock', []],
      ['PUT', '/clock', []],
      ['GET', '/calls', ['device', 'devices']],
      ['GET', '/callbacks', []],
      ['GET', '/notifications', []],
      ['GET', '/requests', ['requestId', 'account', 'action', 'limit']],
    ];
    const answers: Record<string, [number, unknown]> = {};
    const expected: Record<string, [number, unknown]> = {};
    for (const [method, path, params] of ROUTES) {
      // The POSTs and PUTs read no query at all: `reset?seed=7` reset the world of seed 1, and
      // `clock/advance?seconds=60` moved the clock by the body's seconds, or refused for want of them.
      const takes = params.length ? params.join(', ') : 'none';
      const queries: [string, string][] = [
        ['seed=7', `unknown query parameter "seed": this path takes ${takes}`],
        ['seconds=60&seconds=60', `unknown query parameter "seconds": this path takes ${takes}`],
        ...params.flatMap((p): [string, string][] => [
          [`${p}=1&${p}=2`, `${p} is given 2 times: give it once`],
          [`${p}=`, `${p} is empty: give it a value, or leave it out`],
        ]),
      ];
      for (const [query, error] of queries) {
        const key = `${method} ${path}?${query}`;
        const r = await raw.send(method, `/_emulator${path}?${query}`, method === 'GET' ? undefined : {});
        answers[key] = [r.status, r.body];
        expected[key] = [400, { error }];
      }
    }
    expect(answers).to.deep.equal(expected);
    // Nothing was done: the clock did not move.
    expect((await raw.send('GET', '/_emulator/clock')).body).to.deep.include({
      now: '2026-01-05T00:00:00.000Z',
    });
  });

  it('refuses an empty seed, and keeps its world', async () => {
    await raw.send('POST', '/_emulator/reset', { seed: 'kept' });
    const answers: Record<string, [number, unknown]> = {};
    // "" was taken as a seed of its own: a reset meant to give one reset to another world without a word.
    for (const seed of ['', '   ', true, null]) {
      const r = await raw.send('POST', '/_emulator/reset', { seed });
      answers[JSON.stringify(seed)] = [r.status, r.body];
    }
    const EMPTY = 'seed is empty: give a number or a word, or leave it out';
    expect(answers).to.deep.equal({
      '""': [400, { error: EMPTY }],
      '"   "': [400, { error: EMPTY }],
      true: [400, { error: 'seed must be a number or a word, got true' }],
      null: [400, { error: 'seed must be a number or a word, got null' }],
    });
    const accounts = await raw.send('GET', '/_emulator/accounts?devices=0');
    expect((accounts.body as { seed: unknown }).seed).to.equal('kept');
  });

  it('refuses processingSeconds and sessionTtlSeconds past a year, naming the bound', async () => {
    await raw.send('PUT', '/_emulator/faults', { latencyMs: 5 });
    const answers: Record<string, [number, unknown]> = {};
    for (const body of [
      // Taken: a request due after the clock's end, or a session that never expired, without a word.
      { processingSeconds: 1e308 },
      { processingSeconds: 31_536_001 },
      { processingSeconds: -1 },
      { sessionTtlSeconds: 1e308 },
      { sessionTtlSeconds: 31_536_001 },
      { sessionTtlSeconds: 0 },
    ]) {
      const r = await raw.send('PUT', '/_emulator/faults', body);
      answers[JSON.stringify(body)] = [r.status, r.body];
    }
    const PROCESSING = 'processingSeconds must be a number from 0 to 31536000 (simulated seconds: a year)';
    const TTL = 'sessionTtlSeconds must be a number above 0, at most 31536000 (simulated seconds: a year)';
    expect(answers).to.deep.equal({
      '{"processingSeconds":1e+308}': [400, { error: PROCESSING }],
      '{"processingSeconds":31536001}': [400, { error: PROCESSING }],
      '{"processingSeconds":-1}': [400, { error: PROCESSING }],
      '{"sessionTtlSeconds":1e+308}': [400, { error: TTL }],
      '{"sessionTtlSeconds":31536001}': [400, { error: TTL }],
      '{"sessionTtlSeconds":0}': [400, { error: TTL }],
    });
    expect((await raw.send('GET', '/_emulator/faults')).body).to.deep.include({
      latencyMs: 5,
      processingSeconds: 0,
      sessionTtlSeconds: 1200,
    });
    const year = await raw.send('PUT', '/_emulator/faults', {
      processingSeconds: 31_536_000,
      sessionTtlSeconds: 31_536_000,
    });
    expect(year.status).to.equal(200);
  });

  it('refuses a fault it cannot apply as given, and keeps the faults it had', async () => {
    await raw.send('PUT', '/_emulator/faults', { latencyMs: 5 });
    const answers: Record<string, [number, unknown]> = {};
    for (const body of [
      // 500 "Invalid typed array length", with the fault set half applied.
      { maxRequestsPerSecond: 1e12 },
      // Taken, and read as 2 requests a second; 0.5 as no limit at all.
      { maxRequestsPerSecond: 2.5 },
      { maxRequestsPerSecond: 0.5 },
      // Taken, and waited 1 ms: a timer of more than 2147483647 ms fires at once.
      { latencyMs: 3e9 },
      { callbackRetryMs: 1e12 },
      { bogus: 1 },
      { resetNext: { 'session.logn': 1 } },
      { resetNext: { 'session.login': 1.5 } },
    ]) {
      const r = await raw.send('PUT', '/_emulator/faults', body);
      answers[JSON.stringify(body)] = [r.status, r.body];
    }
    const TIMER = 'must be a number from 0 to 2147483647 (milliseconds: the longest a timer waits)';
    const RATE = 'maxRequestsPerSecond must be an integer from 0 to 1000000 (0: no limit)';
    expect(answers).to.deep.equal({
      '{"maxRequestsPerSecond":1000000000000}': [400, { error: RATE }],
      '{"maxRequestsPerSecond":2.5}': [400, { error: RATE }],
      '{"maxRequestsPerSecond":0.5}': [400, { error: RATE }],
      '{"latencyMs":3000000000}': [400, { error: `latencyMs ${TIMER}` }],
      '{"callbackRetryMs":1000000000000}': [400, { error: `callbackRetryMs ${TIMER}` }],
      '{"bogus":1}': [
        400,
        {
          error:
            'unknown fault `bogus`: the faults are errorRate, resetRate, resetNext, latencyMs, maxRequestsPerSecond, sessionTtlSeconds, deviceErrors, maxCallbackThreshold, callbackRetryMs, processingSeconds, neverFinishRate, neverFinishDevices, dropCallbackRate',
        },
      ],
      '{"resetNext":{"session.logn":1}}': [
        400,
        { error: 'resetNext: `session.logn` is not an action (e.g. session.login)' },
      ],
      '{"resetNext":{"session.login":1.5}}': [
        400,
        { error: 'resetNext: the requests of session.login must be an integer from 0 to 1000000' },
      ],
    });
    expect((await raw.send('GET', '/_emulator/faults')).body).to.deep.include({
      latencyMs: 5,
      maxRequestsPerSecond: 0,
    });
  });
});
