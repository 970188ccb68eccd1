/**
 * `fleetbook store migrate`: applies the schema migrations the store of FLEETBOOK_STATE lacks, and says the
 * version it is at. Replicas on PostgreSQL apply them at start too (one at a time); this runs them beforehand,
 * e.g. from a deployment's release step.
 */
import { loadConfig } from '../config.js';
import { isPostgresUrl } from '../store/open.js';

export interface StoreFlags {
  state?: string;
}

export async function storeCommand(sub: string, flags: StoreFlags): Promise<number> {
  if (sub !== 'migrate') {
    process.stderr.write(`fleetbook store: unknown subcommand ${sub}; expected migrate\n`);
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
