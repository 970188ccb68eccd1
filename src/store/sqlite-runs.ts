/** The writes of the SQLite store's runs, and the definitions of playbook versions (playbook/version.ts). */
import type Database from 'better-sqlite3';
import { json } from './sqlite-rows.js';
import { isoTime } from '../clock.js';
import { VERSION_REFRESH_MS } from './retention.js';
import type { RunUpdate } from './late.js';
import type { RunRecord } from './store.js';

type Sql = (text: string) => Database.Statement;

/** A run, as a row of `runs`: in the caller's write. */
export function insertRun(sql: Sql, r: RunRecord): void {
  sql(
    `INSERT INTO runs (id, playbook, status, trigger_json, inputs_json, started_at, ended_at, summary_json, error,
       event_json, owner, version, dry_run)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    r.id,
    r.playbook,
    r.status,
    json(r.trigger),
    json(r.inputs),
    r.startedAt,
    r.endedAt ?? null,
    json(r.summary),
    r.error ?? null,
    json(r.event),
    r.owner ?? null,
    r.version ?? null,
    r.dryRun ? 1 : 0,
  );
}

/** The columns `p` names of run `id`; the others keep their values. */
export function updateRun(sql: Sql, id: string, p: RunUpdate): void {
  const sets: string[] = [];
  const args: unknown[] = [];
  const set = (column: string, value: unknown) => {
    sets.push(`${column} = ?`);
    args.push(value);
  };
  if (p.status !== undefined) set('status', p.status);
  if (p.endedAt !== undefined) set('ended_at', p.endedAt);
  if (p.summary !== undefined) set('summary_json', json(p.summary));
  if (p.error !== undefined) set('error', p.error);
  if (p.movesCounted) set('late_moves_json', null);
  if (sets.length) sql(`UPDATE runs SET ${sets.join(', ')} WHERE id = ?`).run(...args, id);
}

/**
 * Keeps a playbook version's definition, once (RunStore.savePlaybookVersion), in the caller's write; saved again
 * an hour or more later, its time moves (retention.ts, VERSION_REFRESH_MS).
 */
export function savePlaybookVersion(sql: Sql, version: string, definition: string): void {
  sql(
    `INSERT INTO playbook_versions (version, definition_json, saved_at) VALUES (?, ?, ?)
     ON CONFLICT (version) DO UPDATE SET saved_at = excluded.saved_at WHERE playbook_versions.saved_at < ?`,
  ).run(version, definition, new Date().toISOString(), isoTime(Date.now() - VERSION_REFRESH_MS));
}

/** A playbook version's definition, or undefined. */
export function playbookVersion(sql: Sql, version: string): string | undefined {
  const row = sql('SELECT definition_json FROM playbook_versions WHERE version = ?').get(version) as
    { definition_json: string } | undefined;
  return row?.definition_json;
}
