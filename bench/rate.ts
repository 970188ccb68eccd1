/**
 * P6: the rate budget. A loopback server stamps the arrival of every request that the real client (area
 * budget, undici pool) sends at a budget of R requests/s. Reported: the achieved rate as a share of the
 * budget, and the largest number of arrivals in any one-second window (sliding, not aligned).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '../src/api/client.js';
import type { BenchRow } from './types.js';

async function measure(
  budget: number,
  seconds: number,
): Promise<{ ratio: number; maxInWindow: number; n: number }> {
  const arrivals: number[] = [];
  const server = http.createServer((req, res) => {
    if (req.url?.includes('/status')) arrivals.push(performance.now());
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
  arrivals.sort((a, b) => a - b);
  let maxInWindow = 0;
  for (let i = 0, j = 0; i < arrivals.length; i++) {
    while (j < arrivals.length && (arrivals[j] as number) < (arrivals[i] as number) + 1000) j++;
    maxInWindow = Math.max(maxInWindow, j - i);
  }
  const span = (arrivals[arrivals.length - 1] as number) - (arrivals[0] as number);
  return { ratio: (((arrivals.length - 1) / span) * 1000) / budget, maxInWindow, n: arrivals.length };
}

export async function benchRate(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const [budget, seconds] of [
    [100, 5],
    [500, 5],
  ] as const) {
    const r = await measure(budget, seconds);
    const pct = r.ratio * 100;
    rows.push({
      id: 'P6',
      measure: `rate budget ${budget}/s, ${r.n} requests: achieved; most in any 1 s window`,
      value: `${pct.toFixed(1)} %; ${r.maxInWindow}`,
      target: `97-100 %; <= ${budget}`,
      pass: pct >= 97 && pct <= 100 && r.maxInWindow <= budget,
    });
  }
  return rows;
}
