/**
 * P6: the rate budget. A loopback server stamps the arrival of every request that the real client (area
 * budget, undici pool) sends at a budget of R requests/s. Reported: the achieved rate as a share of the
 * budget, and the largest number of arrivals in any one-second window (sliding, not aligned).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '../src/api/client.js';
import type { BenchRow } from './types.js';

async function measure(budget: number, seconds: number): Promise<BudgetUse & { n: number }> {
  const arrivals: Stamp[] = [];
  const server = http.createServer((req, res) => {
    if (req.url?.includes('/status')) arrivals.push({ at: performance.now() });
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(
        req.url?.endsWith('/session/login')
          ? '{"sessionToken":"bench-session"}'
          : '{"txid":"t","status":"COMPLETED"}',
      );
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const rate = { requestsPerSecond: budget, concurrency: 32 };
  const client = createClient({
    baseUrl: `http://127.0.0.1:${port}/api`,
    accessToken: 'bench-token',
    username: 'bench',
    password: 'bench-password',
    rates: { loc: rate, m2m: { requestsPerSecond: 100, concurrency: 4 } },
  });
  await client.session.logout({});
  const n = budget * seconds;
  await Promise.all(
    Array.from({ length: n }, () =>
      client.location.getReportStatus({ accountName: '0000123456-00001', txid: 'bench' }),
    ),
  );
  await client.close();
  await new Promise<void>((r) => server.close(() => r()));
  return { ...budgetUse(arrivals, budget), n: arrivals.length };
}

/** A request as a server read it (ms): `at`, when it was read, and `since`, the earliest it can have come. */
export interface Stamp {
  at: number;
  /** @default at */
  since?: number;
}

export interface BudgetUse {
  /** The achieved rate as a share of the budget, from the first arrival to the last. */
  ratio: number;
  /** The most requests that certainly came within one second, over every window (sliding, not aligned). */
  maxInWindow: number;
  /** The most requests read within one second: more than came in it when the server was stalled. */
  maxAsRead: number;
}

/** Of the requests `arrivals` (in the order read) under a budget of `budget`/s: how much of it they used. */
export function budgetUse(arrivals: Stamp[], budget: number): BudgetUse {
  const busiest = (from: (a: Stamp) => number) => {
    let most = 0;
    for (let i = 0, j = 0; i < arrivals.length; i++) {
      const end = from(arrivals[i] as Stamp) + 1000;
      while (j < arrivals.length && (arrivals[j] as Stamp).at < end) j++;
      most = Math.max(most, j - i);
    }
    return most;
  };
  const first = arrivals[0]?.at ?? NaN;
  const span = (arrivals[arrivals.length - 1]?.at ?? NaN) - first;
  return {
    ratio: (((arrivals.length - 1) / span) * 1000) / budget,
    maxInWindow: busiest((a) => a.since ?? a.at),
    maxAsRead: busiest((a) => a.at),
  };
}

export async function benchRate(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const [budget, seconds] of [
    [100, 5],
    [500, 5],
  ] as const) {
    const r = await measure(budget, seconds);
    rows.push(
      budgetRow(
        'P6',
        `rate budget ${budget}/s, ${r.n} requests: achieved; most in any 1 s window`,
        budget,
        r,
      ),
    );
  }
  return rows;
}

/**
 * A row of the rate budget: the achieved share of it from `least` % (97 by default) to 100 %, never above it in a
 * window (of the requests that certainly came within it; those read within it beside, when more).
 */
export function budgetRow(
  id: string,
  measure: string,
  budget: number,
  use: BudgetUse,
  extra: { value?: string; pass?: boolean; least?: number } = {},
): BenchRow {
  const pct = use.ratio * 100;
  const least = extra.least ?? 97;
  const asRead = use.maxAsRead === use.maxInWindow ? '' : ` (${use.maxAsRead} as read)`;
  return {
    id,
    measure,
    value: `${pct.toFixed(1)} %; ${use.maxInWindow}${asRead}${extra.value ?? ''}`,
    target: `${least}-100 %; <= ${budget}`,
    pass: pct >= least && pct <= 100 && use.maxInWindow <= budget && (extra.pass ?? true),
  };
}
