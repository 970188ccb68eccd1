/**
 * One rate budget shared by three `fleetbook serve` replicas on one PostgreSQL database (issue 20, product.md
 * section 10): each replica is configured with the whole budget of 300 requests/s per area, as an operator
 * configures every replica with the carrier's budget, and together they must keep within it.
 *
 * Two replicas start and each starts a manual run that reads its own account (`accounts.get`, the m2m area)
 * as fast as its share lets it; then the third replica joins, under that load, and starts the same run. The
 * emulator, in this process, sees the requests of all three: each is stamped as its server reads it (node's
 * `http.server.request.start` diagnostics channel, before the emulator's latency), the account in its path says
 * which replica sent it, and a header says when it started: the replicas are started with a preload
 * (helpers/request-start-stamp.mjs) that stamps each request with the wall clock as the API client makes it, in
 * the turn its rate budget lets it start. Then, over every arrival from the first login to the end (the third
 * replica's join among them):
 * - no one-second window holds more than 300 m2m starts: what the budget promises (docs/replicas.md). The replicas
 *   count it over windows of 1,025 ms (SHARED_WINDOW_MS); counting over a second leaves 25 ms for a stamp taken
 *   after its start;
 * - no one-second window holds more than 300 m2m arrivals, but for those held on their way more than 15 ms
 *   longer than the least-held arrival of the window. The promise about arrivals holds only while no request is
 *   held longer than the 25 ms the window keeps (a replica kept off its CPU, or this process, which reads them
 *   late): 15 of those 25 ms for the holds, 10 for the stamp's lag behind the start. Under the whole suite's
 *   load a replica stalled that long was seen to bunch 301 arrivals into one second; such a window passes only
 *   when the requests measured as held longer account for every arrival over 300;
 * - over the steady state (all three running, their shares settled), every /status read of every replica shows
 *   three members and a ceiling of its equal share, a third of the budget (docs/replicas.md: "each live
 *   replica runs at an equal share"), and the three shares add up to the whole budget: none is left out, none
 *   keeps a part of another's; no replica starts more than its share in any one second, and every one is
 *   still sending at the end: none starves. What part of the requests each one sends, and how close to the
 *   whole budget they come, is the bench's to measure (P6-PG3, at 95 % and more): here it depends on the CPU
 *   the other tests leave each replica, and the test only prints it (a run of the whole suite in parallel, the
 *   other worker's replicas tests at the same time, saw 79 %; alone it is 93 % and more; one replica kept off
 *   the CPU under extreme load sent 22.7 % of the requests, its share unchanged).
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
/** The /status reads of each replica the steady state holds at the least: one every 500 ms of STEADY_MS. */
const STEADY_SAMPLES = STEADY_MS / SAMPLE_MS / 2;
/** Reads per run: more than a replica can make, at 150/s before the third joins and 100/s after, by the end. */
const READS = 3_000;
const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'replicas-rate');
const TOKEN = 'replicas-rate-daemon-token-0123456789';

/** The header the preload stamps each request's start into (helpers/request-start-stamp.mjs). */
const START_HEADER = 'x-fleetbook-test-started';
/** The preload, given to each replica's node. */
const STAMP = join(import.meta.dirname, '..', 'helpers', 'request-start-stamp.mjs');
/**
 * How much longer than the least-held arrival of a window a request may be held and still count against the
 * budget: the 25 ms the shared window keeps, less 10 ms for the stamp's lag behind the rate start. The request is
 * made in the turn its start is granted: the lag is the clock's whole millisecond, and the rare preemption or
 * garbage collection between the two. Within 15 ms, the starts of a window's arrivals lie within 1,025 ms, which
 * hold no more than the budget.
 */
const HOLD_SLACK_MS = 15;

/** An API request as the emulator's server read it: `start`, when its replica made it, and `at`, when it was read (Date.now(), ms). */
interface Arrival {
  start: number;
  at: number;
  path: string;
}

/** A replica's m2m share as its /status showed it at `at` (Date.now(), ms). */
interface Sample {
  at: number;
  members: number;
  share: number;
  limit: number;
}

/**
 * Every request the HTTP server on `port` of this process receives, as it reads it, with the start its header
 * says. A request without one fails the test: every request of the replicas is stamped.
 */
function watchArrivals(port: number): { arrivals: Arrival[]; unstamped: string[]; stop(): void } {
  const arrivals: Arrival[] = [];
  const unstamped: string[] = [];
  const onStart = (message: unknown) => {
    const { request } = message as { request: IncomingMessage };
    if (request.socket.localPort !== port) return;
    const path = request.url ?? '';
    const start = Number(request.headers[START_HEADER]);
    if (Number.isFinite(start)) arrivals.push({ start, at: Date.now(), path });
    else if (!path.startsWith('/_emulator/')) unstamped.push(path);
  };
  subscribe('http.server.request.start', onStart);
  return { arrivals, unstamped, stop: () => unsubscribe('http.server.request.start', onStart) };
}

/** The most of `times` (in any order) that lie within one window of `ms`, over every window, and where it begins. */
function busiestWindow(times: readonly number[], ms: number): { count: number; from: number } {
  const sorted = [...times].sort((a, b) => a - b);
  let best = { count: 0, from: Number.NaN };
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + ms) j++;
    if (j - i > best.count) best = { count: j - i, from: sorted[i]! };
  }
  return best;
}

/** Logins are made after the login is recorded in the store: their stamp may lag their rate start. */
const isLogin = (a: Arrival) => a.path.endsWith('/session/login');

/**
 * The one-second window of `arrivals` (in the order read) whose arrivals, but for those held more than `slackMs`
 * longer than its least-held one (and logins, whose hold is not known), are the most; with its arrivals in all.
 */
function busiestHeldWithin(
  arrivals: readonly Arrival[],
  slackMs: number,
): { counted: number; all: number; from: number; held: number } {
  let best = { counted: 0, all: 0, from: Number.NaN, held: 0 };
  for (let i = 0; i < arrivals.length; i++) {
    const from = arrivals[i]!.at;
    if (i > 0 && arrivals[i - 1]!.at === from) continue;
    let j = i;
    while (j < arrivals.length && arrivals[j]!.at < from + WINDOW_MS) j++;
    const window = arrivals.slice(i, j);
    const least = Math.min(...window.filter((a) => !isLogin(a)).map((a) => a.at - a.start));
    const counted = window.filter((a) => !isLogin(a) && a.at - a.start <= least + slackMs).length;
    if (counted > best.counted)
      best = { counted, all: window.length, from, held: Math.max(...window.map((a) => a.at - a.start)) };
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
      nodeArgs: ['--import', STAMP],
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
    const began = Date.now();
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
              at: Date.now(),
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
    const deadline = Date.now() + SETTLE_LIMIT_MS;
    const settled = () =>
      samples.every((s) => {
        const x = s.at(-1);
        return x !== undefined && x.members === 3 && x.share >= 100 && x.limit === x.share;
      });
    while (!settled()) {
      if (Date.now() > deadline)
        throw new Error(`the shares did not settle within ${SETTLE_LIMIT_MS} ms${evidence()}`);
      await sleep(SAMPLE_MS);
    }
    const from = Date.now() + RAMP_MS;
    // At least STEADY_MS, and until each replica's /status has been read often enough to check its share
    // throughout: on a loaded machine the reads come slower than every SAMPLE_MS.
    while (
      Date.now() < from + STEADY_MS ||
      samples.some((s) => s.filter((x) => x.at >= from).length < STEADY_SAMPLES)
    )
      await sleep(SAMPLE_MS);
    const to = Date.now();
    await sleep(500);
    sampling = false;
    await sampler;

    const m2m = watch.arrivals.filter((a) => a.path.startsWith('/api/m2m/'));
    // Logins are left out of the starts: their stamp is taken after the login is recorded, later than its start.
    const starts = busiestWindow(
      m2m.filter((a) => !isLogin(a)).map((a) => a.start),
      WINDOW_MS,
    );
    const arrived = busiestWindow(
      m2m.map((a) => a.at),
      WINDOW_MS,
    );
    const held = busiestHeldWithin(m2m, HOLD_SLACK_MS);
    const longest = Math.max(...m2m.map((a) => a.at - a.start));
    const inSteady = (a: Arrival) => a.at >= from && a.at < to;
    const steady = m2m.filter(inSteady);
    const reads = (account: string) => m2m.filter((a) => a.path === `/api/m2m/v1/accounts/${account}`);
    const each = emu.defaults.accounts.map((account) => reads(account).filter(inSteady).length);
    // Each replica's busiest second of the steady state, against its share of 100/s.
    const eachBusiest = emu.defaults.accounts.map(
      (account) =>
        busiestWindow(
          reads(account)
            .filter(inSteady)
            .map((a) => a.start),
          WINDOW_MS,
        ).count,
    );
    const last = emu.defaults.accounts.map((account) => Math.max(...reads(account).map((a) => a.at)));
    const used = steady.length / ((BUDGET * (to - from)) / 1000);
    console.log(
      `      ${m2m.length} m2m requests in ${((m2m.at(-1)!.at - m2m[0]!.at) / 1000).toFixed(1)} s: at most ${starts.count} started in one second (from ${seconds(starts.from)} s), ${arrived.count} arrived (from ${seconds(arrived.from)} s), held ${longest} ms at the most; at most ${held.counted} arrivals in one second held within ${HOLD_SLACK_MS} ms of each other (from ${seconds(held.from)} s, of ${held.all}, held ${held.held} ms at the most); steady state from ${seconds(from)} s for ${((to - from) / 1000).toFixed(1)} s: ${steady.length} requests, ${(used * 100).toFixed(1)} % of ${BUDGET}/s, per replica ${each.join(' / ')} (at most ${eachBusiest.join(' / ')} in one second); ${seconds(Date.now())} s in all`,
    );

    expect(watch.unstamped, 'requests of the replicas without their start').to.deep.equal([]);
    expect(starts.count, `m2m requests started in the busiest one-second window${evidence()}`).to.be.at.most(
      BUDGET,
    );
    expect(
      held.counted,
      `m2m requests that arrived in one second from ${seconds(held.from)} s (of ${held.all}), but for those held more than ${HOLD_SLACK_MS} ms longer than the least held${evidence()}`,
    ).to.be.at.most(BUDGET);
    expect(
      last.every((t) => t >= to),
      `every replica busy to the end of the steady state${evidence()}`,
    ).to.equal(true);
    // The allocation, as each replica read it throughout the steady state: the whole budget, in three shares.
    const steadySamples = samples.map((s) => s.filter((x) => x.at >= from && x.at < to));
    for (const [i, s] of steadySamples.entries()) {
      expect(s.length, `replica ${i}'s /status reads in the steady state`).to.be.at.least(STEADY_SAMPLES);
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
    const equal = Math.floor(BUDGET / 3);
    for (const [i, s] of steadySamples.entries())
      expect(
        s.map((x) => x.share),
        `replica ${i}'s share, read throughout the steady state${evidence()}`,
      ).to.deep.equal(s.map(() => equal));
    // Starts stamped within 25 ms of the rate start, as above: a second of them lies within a shared window.
    for (const [i, n] of eachBusiest.entries())
      expect(n, `replica ${i}'s m2m requests started in its busiest second${evidence()}`).to.be.at.most(
        equal,
      );
    expect(
      each.reduce((a, b) => a + b),
      'only the runs read in the steady state',
    ).to.equal(steady.length);
  });
});
