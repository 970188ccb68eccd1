/**
 * P6-PG3: one rate budget shared by three replicas on one PostgreSQL database (issue 20). Each replica runs with
 * FLEETBOOK_RATE at the budget of the area, as an operator configures every replica with the carrier's budget;
 * together they must stay within it. The emulator (in its own process) keeps the arrival of every API request.
 * It does not enforce the budget: a 429 would halve the rate of the replica that met it for seconds, and the
 * figure would be that recovery rather than the sharing (the rate tests cover it).
 *
 * After the replicas have run a while (their shares exchanged), callbacks are posted to each in turn (as through
 * a load balancer), two per replica, each starting a run that reads the usage of the 400 devices it names, one
 * `devices.usage` call a device, 32 at a time (bench/fixtures/daemon/p6: a light call, so that the machine's
 * cores are not what limits the rate): every replica has work for the whole measure, at its share of the budget. Reported: the connectivity area's (`m2m`) requests as the emulator
 * received them, from the first to the last: the achieved rate as a share of the budget, and the most in any
 * one-second window (sliding); the 429s; each replica's usage calls (its /metrics); and the CPU time of each
 * process, the database server's included.
 */
import { join } from 'node:path';
import { postgresAdminUrl, postgresUrl, stopPostgres } from '../test/helpers/postgres.js';
import { activeImeis, callbacks, drained, metrics, others, post, total } from './load.js';
import { Poster } from './poster.js';
import {
  cpuOf,
  cpuSplit,
  describePostgres,
  startDaemons,
  startEmulatorProcess,
  stopDaemons,
} from './processes.js';
import { budgetRow, budgetUse } from './rate.js';
import type { BenchRow } from './types.js';

const BUDGET = 300;
const REPLICAS = 3;
/** Requests to make, one a device: this many seconds of the whole budget. */
const SECONDS = 8;
/** Runs per replica: each reads the usage of its devices 32 at a time (bench/fixtures/daemon/p6). */
const RUNS_PER_REPLICA = 2;
/** How long the replicas run before the work comes: their shares are then settled, as in a running cluster. */
const SETTLE_MS = 3_000;
const CONNECTIONS = 16;
/**
 * The least share of the budget used, in %: issue 20's for replicas sharing one. A shared area counts its budget
 * over a window of 1,025 ms (SHARED_WINDOW_MS, for the time a request is held between its start and its arrival;
 * src/rate/ARCHITECTURE.md), so a member runs at most 1,000/1,025 of its share: 97.6 %, where one process alone
 * reaches 99 % (P6).
 */
const SHARED_LEAST = 95;

export async function benchSharedRate(): Promise<BenchRow[]> {
  const server = await describePostgres(await postgresAdminUrl({ fsync: true }));
  const emu = await startEmulatorProcess({
    timeScale: 0,
    accounts: 1,
    devicesPerAccount: 5_000,
    seed: 7,
    stamp: true,
  });
  try {
    const account = emu.defaults.accounts[0] as string;
    const work = BUDGET * SECONDS;
    const runs = REPLICAS * RUNS_PER_REPLICA;
    const perRun = work / runs;
    const imeis = await activeImeis(emu, account);
    if (imeis.length < work) throw new Error(`P6-PG3: only ${imeis.length} active IMEI devices`);
    const daemons = await startDaemons(
      emu,
      join(import.meta.dirname, 'fixtures', 'daemon', 'p6'),
      await postgresUrl({ fsync: true }),
      REPLICAS,
      { FLEETBOOK_CALLBACK_ACCOUNTS: account, FLEETBOOK_RATE: String(BUDGET) },
    );
    const poster = new Poster(
      daemons.map((d) => d.url),
      CONNECTIONS,
    );
    let row: BenchRow;
    try {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      await emu.arrivals(); // the replicas' start: logins and registrations
      const measured = { daemons, emu, postmaster: server.postmaster };
      const cpu0 = cpuOf(measured);
      const posts = callbacks(
        (daemons[0] as (typeof daemons)[0]).url,
        'p6',
        runs,
        'overuse-bench',
        account,
        (i) => imeis.slice(i * perRun, (i + 1) * perRun),
      );
      const batch = await post(poster, posts);
      // The figure is the emulator's: the end is awaited, not timed.
      const done = await drained(daemons, runs, 120_000, 500);
      const split = cpuSplit(cpu0, cpuOf(measured), work);
      const arrivals = await emu.arrivals();
      const m2m = arrivals.filter((a) => a.area === 'm2m');
      const throttled = arrivals.filter((a) => a.status === 429).length;
      const use = budgetUse(m2m, BUDGET);
      const span = (Math.max(...m2m.map((a) => a.at)) - Math.min(...m2m.map((a) => a.at))) / 1000;
      const each: number[] = [];
      for (const d of daemons)
        each.push(total(await metrics([d]), 'fleetbook_api_calls_total', 'action="devices.usage"'));
      const succeeded = total(await metrics(daemons), 'fleetbook_runs_total', 'status="succeeded"');
      const notStored = others(batch.other);
      row = budgetRow(
        'P6-PG3',
        `${server.label}, ${REPLICAS} replicas each configured with the m2m budget of ${BUDGET}/s, against the emulator: ${runs} callbacks, each to the next replica, each starting a run that reads the usage of ${perRun} devices, one devices.usage call a device, 32 at a time; ${succeeded} runs succeeded; ${m2m.length} m2m requests in ${span.toFixed(2)} s (usage calls per replica ${each.join(' / ')}), ${throttled} answered 429; ${split}${notStored ? `; not stored: ${notStored}` : ''}${done ? '' : '; TIMED OUT'}: achieved; most in any 1 s window`,
        BUDGET,
        use,
        {
          value: `; ${throttled} x 429`,
          pass: done && batch.stored.size === runs && succeeded === runs,
          least: SHARED_LEAST,
        },
      );
    } finally {
      poster.close();
      await stopDaemons(daemons);
    }
    return [row];
  } finally {
    await emu.close();
    await stopPostgres();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const row of await benchSharedRate()) console.log(row);
}
