/**
 * One rate budget shared by three `fleetbook serve` replicas on one PostgreSQL database (issue 20, product.md
 * section 10): each replica is configured with the whole budget of 300 requests/s per area, as an operator
 * configures every replica with the carrier's budget, and together they must keep within it.
 *
 * Two replicas start and each starts a manual run that reads its own account (`accounts.get`, the m2m area)
 * as fast as its share lets it; then the third replica joins, under that load, and starts the same run. The
 * emulator, in this process, sees the requests of all three: each is stamped as its server receives it (node's
 * `http.server.request.start` diagnostics channel, before the emulator's latency), and the account in its path
 * says which replica sent it. Then:
 * - no one-second window, sliding over every arrival from the first login to the end (the third replica's
 *   join among them), holds more than 300 m2m requests;
 * - over the steady state (all three running, their shares settled), every /status read of every replica shows
 *   three members and a ceiling of its share, and the three shares add up to the whole budget: none is left
 *   out, none keeps a part of another's; each replica sent at least a quarter of the requests: none starves.
 *   How close to the whole budget they come is the bench's to measure (P6-PG3, at 95 % and more): here it
 *   depends on the CPU the other tests leave, and the test only prints it (a run of the whole suite in
 *   parallel, the other worker's replicas tests at the same time, saw 79 %; alone it is 93 % and more).
 *
 * The replicas are the built CLI (`npm run build` first); the database is a fresh one on the tests' own
 * PostgreSQL server. Each replica's `/status` `rates` (its members, share and ceiling) is sampled throughout,
 * and shown when an assertion fails.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { ShareStatus } from '../../src/rate/shares.js';
import { sleep } from '../helpers/chaos.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess } from '../helpers/daemon.js';
import { postgresUrl } from '../helpers/postgres.js';

const BUDGET = 300;
const WINDOW_MS = 1000;
/**
 * The emulator's delay before each answer, as a remote service's: a replica at its share of 100/s has about 5
 * requests in flight, and one alone at the whole budget about 15, within FLEETBOOK_CONCURRENCY.
 */
const LATENCY_MS = 50;
const CONCURRENCY = 32;
/** How often each replica's /status is read. */
const SAMPLE_MS = 250;
/** The most the shares may take to settle once the third replica has joined: a few exchanges and a window. */
const SETTLE_LIMIT_MS = 10_000;
/** From the sample that shows every replica at its share of three to the steady state. */
const RAMP_MS = 500;
const STEADY_MS = 12_000;
/** Reads per run: more than a replica can make, at 150/s before the third joins and 100/s after, by the end. */
const READS = 3_000;
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'replicas-rate');
const TOKEN = 'replicas-rate-daemon-token-0123456789';

/**
 * An API request as the emulator's server read it (performance.now(), ms): `at`, when it was read, and `since`,
 * the earliest it can have arrived.
 */
interface Arrival {
  since: number;
  at: number;
  path: string;
}

/** A replica's m2m share as its /status showed it at `at` (performance.now(), ms). */
interface Sample {
  at: number;
  members: number;
  share: number;
  limit: number;
}

/**
 * Every request the HTTP server on `port` of this process receives. A request is stamped when the server reads
 * it; one that came while this process was stalled (its CPU taken by the replicas and the database on a small
 * machine, or a garbage collection) is read only when the stall ends, with every other that came during it. So
 * each request also gets the earliest time it can have come: the tick of a millisecond timer in the turn of
 * the event loop before the one that read it, which is before any stall that delayed the reading.
 */
function watchArrivals(port: number): { arrivals: Arrival[]; longestStall(): number; stop(): void } {
  const arrivals: Arrival[] = [];
  let latest = performance.now();
  let before = latest;
  let longest = 0;
  const ticker = setInterval(() => {
    before = latest;
    latest = performance.now();
    longest = Math.max(longest, latest - before);
  }, 1);
  const onStart = (message: unknown) => {
    const { request } = message as { request: IncomingMessage };
    if (request.socket.localPort === port)
      arrivals.push({ since: before, at: performance.now(), path: request.url ?? '' });
  };
  subscribe('http.server.request.start', onStart);
  return {
    arrivals,
    longestStall: () => longest,
    stop: () => {
      clearInterval(ticker);
      unsubscribe('http.server.request.start', onStart);
    },
  };
}

/**
 * The most requests of `arrivals` (in the order read) that came within one window of `ms`, over every window,
 * not only aligned ones: by the time each was read, or (`certain`) counting only those that certainly came
 * within it, from the earliest time each can have come to when it was read.
 */
function busiestWindow(
  arrivals: readonly Arrival[],
  ms: number,
  certain: boolean,
): { count: number; from: number } {
  const earliest = (a: Arrival) => (certain ? a.since : a.at);
  let best = { count: 0, from: Number.NaN };
  for (let i = 0, j = 0; i < arrivals.length; i++) {
    const from = earliest(arrivals[i]!);
    // Windows that begin at the earliest time of some request: the first of those with that time counts the most.
    if (i > 0 && earliest(arrivals[i - 1]!) === from) continue;
    j = Math.max(j, i);
    while (j < arrivals.length && arrivals[j]!.at < from + ms) j++;
    if (j - i > best.count) best = { count: j - i, from };
  }
  return best;
}

describe('daemon: three replicas on one PostgreSQL share one rate budget', function () {
  this.timeout(120_000);
  let emu: Emulator;
  let url: string;
  let watch: ReturnType<typeof watchArrivals>;
  const daemons: DaemonProcess[] = [];

  before(async () => {
    emu = await startEmulator({ port: 0, timeScale: 0, seed: 1, accounts: 3, devicesPerAccount: 10 });
    emu.setFaults({ latencyMs: LATENCY_MS });
    url = await postgresUrl();
    watch = watchArrivals(Number(new URL(emu.baseUrl).port));
  });

  after(async () => {
    watch?.stop();
    for (const d of daemons) await d.kill();
    await emu?.close();
  });

  const start = async (i: number) => {
    const d = await DaemonProcess.start(`replica ${i}`, {
      playbooks: FIXTURES,
      state: url,
      env: {
        ...emulatorEnv(emu),
        FLEETBOOK_CALLBACK_USERNAME: 'rate-listener',
        FLEETBOOK_CALLBACK_PASSWORD: 'rate-listener-password',
        FLEETBOOK_DAEMON_TOKEN: TOKEN,
        FLEETBOOK_RATE: String(BUDGET),
        FLEETBOOK_CONCURRENCY: String(CONCURRENCY),
        FLEETBOOK_LOG_LEVEL: 'warn',
      },
    });
    daemons[i] = d;
    return d;
  };

  /** Starts the run of replica `i`, which reads the i-th account. */
  const startRun = async (i: number) => {
    await daemons[i]!.startRun('read-account', TOKEN, {
      account: emu.defaults.accounts[i],
      reads: Array.from({ length: READS }, (_, k) => k),
    });
  };

  it('never sends more than 300 m2m requests in any one second, and shares all of them among the three', async () => {
    const began = performance.now();
    const seconds = (t: number) => ((t - began) / 1000).toFixed(2);
    // Each replica's m2m share over time, from its /status.
    const samples: Sample[][] = [[], [], []];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        await Promise.all(
          daemons.map(async (d, i) => {
            const status = (await (await fetch(`${d.url}/status`)).json()) as { rates?: ShareStatus };
            const m2m = status.rates?.areas.m2m;
            samples[i]!.push({
              at: performance.now(),
              members: status.rates?.members.length ?? 0,
              share: m2m?.share ?? 0,
              limit: m2m?.limit ?? 0,
            });
          }),
        );
        await sleep(SAMPLE_MS);
      }
    })();
    const evidence = () =>
      `\n/status rates of each replica (seconds since the start: members, m2m share/ceiling):\n${samples
        .map(
          (s, i) =>
            `replica ${i}: ${s.map((x) => `${seconds(x.at)} ${x.members} ${x.share}/${x.limit}`).join(', ')}`,
        )
        .join('\n')}`;

    await Promise.all([start(0), start(1)]);
    await Promise.all([startRun(0), startRun(1)]);
    // The third joins while the two run at the whole budget between them.
    await start(2);
    await startRun(2);
    // The steady state begins once each replica runs at its share of three.
    const deadline = performance.now() + SETTLE_LIMIT_MS;
    const settled = () =>
      samples.every((s) => {
        const x = s.at(-1);
        return x !== undefined && x.members === 3 && x.share >= 100 && x.limit === x.share;
      });
    while (!settled()) {
      if (performance.now() > deadline)
        throw new Error(`the shares did not settle within ${SETTLE_LIMIT_MS} ms${evidence()}`);
      await sleep(SAMPLE_MS);
    }
    const from = performance.now() + RAMP_MS;
    const to = from + STEADY_MS;
    await sleep(to - performance.now() + 500);
    sampling = false;
    await sampler;

    const m2m = watch.arrivals.filter((a) => a.path.startsWith('/api/m2m/'));
    const asRead = busiestWindow(m2m, WINDOW_MS, false);
    const busiest = busiestWindow(m2m, WINDOW_MS, true);
    const inSteady = (a: Arrival) => a.at >= from && a.at < to;
    const steady = m2m.filter(inSteady);
    const reads = (account: string) => m2m.filter((a) => a.path === `/api/m2m/v1/accounts/${account}`);
    const each = emu.defaults.accounts.map((account) => reads(account).filter(inSteady).length);
    // Each replica's busiest second of the steady state, against its share of 100/s.
    const eachBusiest = emu.defaults.accounts.map(
      (account) =>
        busiestWindow(
          reads(account).filter((a) => a.since >= from && a.at < to),
          WINDOW_MS,
          true,
        ).count,
    );
    const last = emu.defaults.accounts.map((account) => Math.max(...reads(account).map((a) => a.at)));
    const used = steady.length / ((BUDGET * STEADY_MS) / 1000);
    console.log(
      `      ${m2m.length} m2m requests in ${((m2m.at(-1)!.at - m2m[0]!.at) / 1000).toFixed(1)} s: at most ${busiest.count} in one second (from ${seconds(busiest.from)} s; ${asRead.count} by the time read, from ${seconds(asRead.from)} s; this process stalled ${watch.longestStall().toFixed(0)} ms at the most); steady state from ${seconds(from)} s for ${STEADY_MS / 1000} s: ${steady.length} requests, ${(used * 100).toFixed(1)} % of ${BUDGET}/s, per replica ${each.join(' / ')} (at most ${eachBusiest.join(' / ')} in one second); ${seconds(performance.now())} s in all`,
    );

    expect(busiest.count, `m2m requests in the busiest one-second window${evidence()}`).to.be.at.most(BUDGET);
    expect(
      last.every((t) => t >= to),
      `every replica busy to the end of the steady state${evidence()}`,
    ).to.equal(true);
    // The allocation, as each replica read it throughout the steady state: the whole budget, in three shares.
    const steadySamples = samples.map((s) => s.filter((x) => x.at >= from && x.at < to));
    for (const [i, s] of steadySamples.entries()) {
      expect(s.length, `replica ${i}'s /status reads in the steady state`).to.be.at.least(
        STEADY_MS / SAMPLE_MS / 2,
      );
      for (const x of s)
        expect(
          { members: x.members, limit: x.limit },
          `replica ${i} at ${seconds(x.at)} s${evidence()}`,
        ).to.deep.equal({ members: 3, limit: x.share });
    }
    expect(
      steadySamples.reduce((sum, s) => sum + s[0]!.share, 0),
      `the three shares of the budget${evidence()}`,
    ).to.equal(BUDGET);
    for (const [i, n] of each.entries())
      expect(n / steady.length, `replica ${i}'s part of the requests${evidence()}`).to.be.at.least(0.25);
    expect(
      each.reduce((a, b) => a + b),
      'only the runs read in the steady state',
    ).to.equal(steady.length);
  });
});
