/** What the parts of the SQLite store share: prepared statements, and the rows both stores read (rows.ts). */
import type Database from 'better-sqlite3';

export {
  compare,
  inboxEvent,
  json,
  ledgerRow,
  parse,
  toRun,
  type EntryRow,
  type InboxRow,
  type ResultColumns,
  type RunRow,
} from './rows.js';

/** A statement per SQL text on `db`, prepared on first use and kept. */
export function preparer(db: Database.Database): (text: string) => Database.Statement {
  const prepared = new Map<string, Database.Statement>();
  return (text) => {
    let st = prepared.get(text);
    if (!st) {
      st = db.prepare(text);
      prepared.set(text, st);
    }
    return st;
  };
}
