/**
 * `fleetbook store migrate`: applies the schema migrations the store of FLEETBOOK_STATE lacks, and says the
 * version it is at. Replicas on PostgreSQL apply them at start too (one at a time); this runs them beforehand,
 * e.g. from a deployment's release step. `fleetbook store prune`: removes what ended long ago (store/retention.ts).
 * `fleetbook store compact`: gives a SQLite file's freed space back to the file system.
 */
import { statSync } from 'node:fs';
import { loadConfig, stateOrigin } from '../config.js';
import { parseDuration } from '../playbook/duration.js';
import { openStore } from '../store/open.js';
import { isPostgresUrl } from '../util/state-url.js';
import { pruneStore } from '../store/retention.js';
import type { SqliteOptions } from '../store/sqlite.js';
import { EXIT_USAGE } from './exit-codes.js';

export interface StoreFlags {
  state?: string;
  olderThan?: string;
  /** `store prune`: the playbooks the daemons run, whose schedules' backfills are kept (see prune). */
  playbooks?: string;
}

/**
 * The state file of these commands, which never create one: a mistyped path would give an empty store, and a
 * report of what was done to it.
 */
function existing(flags: StoreFlags): SqliteOptions {
  return { create: false, origin: stateOrigin(process.env, flags) };
}

/** `fleetbook store migrate`: applies the migrations the store lacks, and says the version it is at. */
export async function migrate(flags: StoreFlags): Promise<number> {
  const { state } = loadConfig(process.env, flags.state ? { state: flags.state } : {});
  let said: string;
  if (isPostgresUrl(state)) {
    const { migratePostgres } = await import('../store/postgres/migrations.js');
    const { describeUrl } = await import('../store/postgres/pool.js');
    const { origin } = existing(flags);
    said = `${describeUrl(state, origin)} is at schema version ${await migratePostgres(state, origin)}`;
  } else {
    // Opening the file applies its migrations.
    const { MIGRATIONS, SqliteStore } = await import('../store/sqlite.js');
    const store = new SqliteStore(state, existing(flags));
    await store.close();
    said = `${store.describe} is at schema version ${MIGRATIONS.length}`;
  }
  process.stdout.write(`${said}\n`);
  return 0;
}

/**
 * `fleetbook store prune [--older-than D] [--playbooks DIR]`: removes the runs that ended more than D ago
 * (FLEETBOOK_RETENTION when not given), with their checkpoints and ledger, and the callbacks processed before then;
 * says how many. A backfill of a fire its schedule has not passed is kept; given the playbooks the daemons run,
 * only while its schedule is one of theirs, as `serve` prunes (Retention.pruneEnded).
 */
export async function prune(flags: StoreFlags): Promise<number> {
  const config = loadConfig(process.env, flags.state ? { state: flags.state } : {});
  const keep = flags.olderThan ?? config.retention;
  const keepMs = keep === undefined ? undefined : parseDuration(keep);
  if (keepMs === undefined || keepMs <= 0) {
    process.stderr.write(
      keep === undefined
        ? 'fleetbook store prune: say how much to keep: --older-than 90d, or FLEETBOOK_RETENTION\n'
        : `fleetbook store prune: --older-than must be a duration such as 90d, 12h or 30m (got ${JSON.stringify(keep)})\n`,
    );
    return EXIT_USAGE;
  }
  let schedules: string[] | undefined;
  if (flags.playbooks !== undefined) {
    const { loadPlaybookSources, PlaybookSetError } = await import('../daemon/playbook-set.js');
    const { schedulesOf } = await import('../daemon/scheduler.js');
    try {
      const set = await loadPlaybookSources(flags.playbooks);
      schedules = [...set.playbooks.values()].flatMap(schedulesOf).map((e) => e.key);
    } catch (e) {
      if (!(e instanceof PlaybookSetError)) throw e;
      const list = e.problems.length ? `:\n${e.problems.join('\n')}` : '';
      process.stderr.write(`fleetbook store prune: ${e.problem}; nothing pruned${list}\n`);
      return EXIT_USAGE;
    }
  }
  const store = await openStore(config.state, existing(flags));
  try {
    const p = await pruneStore(store, keepMs, schedules ? { schedules } : {});
    process.stdout.write(
      `${store.describe}: removed ${p.runs} run(s) that ended before ${p.before} (${p.ledgerEntries} ledger entries), ${p.callbacks} callback(s) processed before then and ${p.versions} playbook version(s) no run kept names\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * `fleetbook store compact`: rewrites the SQLite state file without the space that pruning freed, and says its
 * size before and after. Refused while a daemon or a run holds the file (the rewrite takes its write lock for as
 * long as it lasts), and on PostgreSQL, whose autovacuum reuses the space (VACUUM FULL gives it back).
 */
export async function compact(flags: StoreFlags): Promise<number> {
  const { state } = loadConfig(process.env, flags.state ? { state: flags.state } : {});
  if (isPostgresUrl(state)) {
    process.stderr.write(
      'fleetbook store compact: a SQLite state file only. On PostgreSQL, autovacuum reuses the space that pruning frees; `VACUUM FULL` gives it back to the file system, with an exclusive lock on each table\n',
    );
    return EXIT_USAGE;
  }
  // Measured before the store is opened: opening a file of an older schema migrates it.
  const before = sizeMb(state);
  const { SqliteStore } = await import('../store/sqlite.js');
  const store = new SqliteStore(state, existing(flags));
  try {
    const [holder] = await store.liveOwners(Date.now());
    if (holder) {
      process.stderr.write(
        `fleetbook store compact: ${store.describe} is in use by ${holder.role === 'daemon' ? 'fleetbook serve' : 'fleetbook run'} (pid ${holder.pid} on ${holder.host}, lease until ${new Date(holder.leaseUntil).toISOString()}): stop it first. A process that died frees the file when its lease expires\n`,
      );
      return EXIT_USAGE;
    }
    store.compact();
    process.stdout.write(`${store.describe}: compacted from ${before} MB to ${sizeMb(state)} MB\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/** The file and its write-ahead log, in MB. */
function sizeMb(file: string): string {
  const size = (f: string) => {
    try {
      return statSync(f).size;
    } catch {
      return 0;
    }
  };
  return ((size(file) + size(`${file}-wal`)) / 2 ** 20).toFixed(1);
}
