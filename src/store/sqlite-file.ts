/**
 * The SQLite state file opened: created when needed (unless told not to), in WAL mode with the store's settings,
 * migrated (sqlite-migrations.ts); a file that cannot be opened, or is not a state file, named in the error.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from '../errors.js';
import { makeDirs } from '../util/files.js';
import { migrateSqlite } from './sqlite-migrations.js';

/**
 * Pages of write-ahead log after which a commit checkpoints it into the database, on the event loop (two
 * syncs and a copy of every page changed since the last one). SQLite's default, 1,000 pages, checkpointed the
 * daemon every 85 runs or so, 8 ms each; at 10,000 (a log of up to 40 MB) the pages that many runs share (the
 * tails of the inbox, the runs and the ledger) are copied once, and the event loop stops a tenth as often.
 */
export const CHECKPOINT_PAGES = 10_000;

/**
 * The connection's page cache, in KiB (negative: SQLite's unit for a size, not a count of pages): SQLite's own
 * default, 2 MB. better-sqlite3 builds SQLite with 16 MB, which a run of a million devices fills with pages of
 * the ledger and the step items it only appends to and reads back once (the system's file cache holds them as
 * well): 14 MB of the process's resident set, for nothing.
 */
const CACHE_KIB = -2000;

/** How a SQLite state file is opened. */
export interface SqliteOptions {
  /**
   * Whether a file that does not exist is created (with its directories). The commands that only read or
   * maintain a store refuse one instead: a mistyped path would otherwise give an empty store, and "no runs".
   * @default true
   */
  create?: boolean;
  /**
   * Where the path came from, as the store's messages name it: `--state`, or the variable.
   * @default 'FLEETBOOK_STATE'
   */
  origin?: string;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Opens (creating when needed, unless told not to) the state file `file`, migrated; `:memory:` for a throwaway one. */
export function openSqliteFile(file: string, options: SqliteOptions = {}): Database.Database {
  const { create = true, origin = 'FLEETBOOK_STATE' } = options;
  let db: Database.Database;
  try {
    if (create && file !== ':memory:') makeDirs(dirname(file));
    db = new Database(file, { fileMustExist: !create });
  } catch (e) {
    if (!create && !existsSync(file))
      throw new ConfigError(
        `the state file ${file} (${origin}) does not exist: check the path (\`fleetbook run\` and \`fleetbook serve\` create the file)`,
      );
    if (isDirectory(file))
      throw new ConfigError(
        `the state file ${file} (${origin}) is a directory: give a file's path, such as ${join(file, 'state.db')}`,
      );
    // better-sqlite3 says only "unable to open database file": name the file and where it comes from.
    throw new ConfigError(
      `cannot open the state file ${file} (${origin}): ${(e as Error).message}; it must be a file path in a writable directory`,
    );
  }
  try {
    db.pragma('journal_mode = WAL');
    // NORMAL in WAL mode: a commit survives the process being killed (SIGKILL), which is what a run's
    // checkpoints and ledger must survive; only a power cut can lose the last ones, and a resumed run then
    // repeats them after reconciling. The callback inbox, which acknowledges to the service, syncs each commit.
    db.pragma('synchronous = NORMAL');
    db.pragma(`wal_autocheckpoint = ${CHECKPOINT_PAGES}`);
    db.pragma(`cache_size = ${CACHE_KIB}`);
    db.pragma('busy_timeout = 5000');
    migrateSqlite(db, file);
  } catch (e) {
    db.close();
    // SQLite says only "file is not a database" or "database disk image is malformed": say which file.
    const code = (e as { code?: string }).code;
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT')
      throw new ConfigError(
        `the state file ${file} (${origin}) is damaged or is not a fleetbook state file: ${(e as Error).message}. Restore it from a backup, or point FLEETBOOK_STATE at another file`,
      );
    throw e;
  }
  return db;
}
