/**
 * Opens the store that FLEETBOOK_STATE names: a PostgreSQL URL (`postgres://` or `postgresql://`) for several
 * replicas, else the path of the embedded SQLite file (product.md section 10).
 */
import { SqliteStore, type SqliteOptions } from './sqlite.js';
import type { Store } from './store.js';
import { isPostgresUrl } from '../util/state-url.js';

/** Opens the store; `options` apply to a SQLite file (sqlite.ts), and their `origin` to a database too. */
export async function openStore(state: string, options?: SqliteOptions): Promise<Store> {
  if (isPostgresUrl(state)) {
    const { openPostgresStore } = await import('./postgres/store.js');
    return openPostgresStore(state, options?.origin ? { origin: options.origin } : {});
  }
  return new SqliteStore(state, options);
}
