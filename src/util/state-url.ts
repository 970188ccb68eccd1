/** Whether FLEETBOOK_STATE names a PostgreSQL database rather than a SQLite file: `postgres://` or `postgresql://`. */
export function isPostgresUrl(state: string): boolean {
  return /^postgres(ql)?:\/\//i.test(state);
}
