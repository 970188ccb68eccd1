/**
 * A session login counted (api/login-count.ts) as a row of the `session_logins` table, on either store: its
 * columns, and the row read back as a CountedLogin.
 */
import type { CountedLogin } from '../api/login-count.js';
import type { Process } from './lease.js';

/** A row as a store reads it: `sent_at` a number on SQLite, a string (bigint) on PostgreSQL. */
export interface LoginRow {
  service: string;
  username: string;
  id: string;
  sent_at: number | string;
  state: CountedLogin['state'];
  error: string | null;
}

/** The columns of a LoginRow. */
export const LOGIN_COLUMNS = 'service, username, id, sent_at, state, error';

export function countedLogin(r: LoginRow): CountedLogin {
  return {
    service: r.service,
    username: r.username,
    id: r.id,
    sentAt: Number(r.sent_at),
    state: r.state,
    ...(r.error !== null ? { error: r.error } : {}),
  };
}

/** A row with the process that counted it, for clearedBySuccess to judge whether it is gone. */
export function withProcess(r: LoginRow & Process): CountedLogin & Process {
  return { ...countedLogin(r), pid: r.pid, host: r.host, boot: r.boot };
}
