/**
 * `fleetbook store migrate`: applies the schema migrations the store of FLEETBOOK_STATE lacks, and says the
 * version it is at. Replicas on PostgreSQL apply them at start too (one at a time); this runs them beforehand,
 * e.g. from a deployment's release step. `fleetbook store prune`: removes what ended long ago (store/retention.ts).
 */
import { loadConfig } from '../config.js';
import { parseDuration } from '../playbook/duration.js';
import { isPostgresUrl, openStore } from '../store/open.js';
import { pruneStore } from '../store/retention.js';

export interface StoreFlags {
  state?: string;
  olderThan?: string;
}

export async function storeCommand(sub: string, flags: StoreFlags): Promise<number> {
  if (sub === 'prune') return prune(flags);
  if (sub !== 'migrate') {
    process.stderr.write(`fleetbook store: unknown subcommand ${sub}; expected migrate or prune\n`);
    return 2;
  }
  const { state } = loadConfig(process.env, flags.state ? { state: flags.state } : {});
  let said: string;
  if (isPostgresUrl(state)) {
    const { migratePostgres } = await import('../store/postgres/migrations.js');
    const { describeUrl } = await import('../store/postgres/pool.js');
    said = `${describeUrl(state)} is at schema version ${await migratePostgres(state)}`;
  } else {
    // Opening the file applies its migrations.
    const { MIGRATIONS, SqliteStore } = await import('../store/sqlite.js');
    const store = new SqliteStore(state);
    await store.close();
    said = `${store.describe} is at schema version ${MIGRATIONS.length}`;
  }
  process.stdout.write(`${said}\n`);
  return 0;
}

/**
 * `fleetbook store prune [--older-than D]`: removes the runs that ended more than D ago (FLEETBOOK_RETENTION when
 * not given), with their checkpoints and ledger, and the callbacks processed before then; says how many.
 */
async function prune(flags: StoreFlags): Promise<number> {
  const config = loadConfig(process.env, flags.state ? { state: flags.state } : {});
  const keep = flags.olderThan ?? config.retention;
  const keepMs = keep === undefined ? undefined : parseDuration(keep);
  if (keepMs === undefined || keepMs <= 0) {
    process.stderr.write(
      keep === undefined
        ? 'fleetbook store prune: say how much to keep: --older-than 90d, or FLEETBOOK_RETENTION\n'
        : `fleetbook store prune: --older-than must be a duration such as 90d, 12h or 30m (got ${JSON.stringify(keep)})\n`,
    );
    return 2;
  }
  const store = await openStore(config.state);
  try {
    const p = await pruneStore(store, keepMs);
    process.stdout.write(
      `${store.describe}: removed ${p.runs} run(s) that ended before ${p.before} (${p.ledgerEntries} ledger entries), ${p.callbacks} callback(s) processed before then and ${p.versions} playbook version(s) no run kept names\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}
