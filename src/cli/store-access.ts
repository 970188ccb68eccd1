/** What the commands that read the store (`runs`, `device`, `logins`) share: the store opened, and their tables. */
import { loadConfig, stateOrigin, type Config } from '../config.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';

/** Runs `use` on the store of `--state`, else of FLEETBOOK_STATE, and closes it. */
export async function withStore(
  flags: { state?: string },
  use: (store: Store, config: Config) => Promise<number>,
): Promise<number> {
  const config = loadConfig(process.env, flags.state ? { state: flags.state } : {});
  // Never created here: a mistyped path would otherwise answer "no runs".
  const store = await openStore(config.state, { create: false, origin: stateOrigin(process.env, flags) });
  try {
    return await use(store, config);
  } finally {
    await store.close();
  }
}

/** `rows` (a header first) as lines of columns two spaces apart, each as wide as its widest cell but the last. */
export function aligned(rows: string[][]): string {
  const last = (rows[0]?.length ?? 1) - 1;
  const widths = (rows[0] ?? []).map((_, c) => Math.max(...rows.map((row) => (row[c] ?? '').length)));
  // A line whose last cells are empty ends at its last text, not in spaces.
  return rows
    .map(
      (row) =>
        `${row
          .map((cell, c) => (c < last ? cell.padEnd(widths[c] as number) : cell))
          .join('  ')
          .trimEnd()}\n`,
    )
    .join('');
}

/** A `--limit` of rows to list, 50 when not given, or what is wrong with it. */
export function limitOf(text: string | undefined): number | string {
  const limit = text === undefined ? 50 : Number(text);
  if (!/^[0-9]+$/.test(text ?? '50') || limit < 1 || limit > 1000)
    return `--limit must be a whole number from 1 to 1000 (got ${JSON.stringify(text)})`;
  return limit;
}

/**
 * What a step returned for a device, on its line: a location as `lat,lon ±radius m at time (cached)`, anything
 * else as JSON; nothing when it returned nothing.
 */
export function returned(data: unknown): string {
  if (data === undefined || data === null) return '';
  const l = data as {
    latitude?: unknown;
    longitude?: unknown;
    radius?: unknown;
    time?: unknown;
    cached?: unknown;
  };
  if (typeof l.latitude !== 'number' || typeof l.longitude !== 'number') return JSON.stringify(data);
  return `${l.latitude},${l.longitude}${l.radius !== undefined ? ` ±${String(l.radius)} m` : ''}${l.time ? ` at ${String(l.time)}` : ''}${l.cached ? ' (cached)' : ''}`;
}
