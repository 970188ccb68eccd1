/** What the commands that read the store (`runs`, `logins`) share: the store opened, and their tables. */
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
  return rows
    .map(
      (row) => `${row.map((cell, c) => (c < last ? cell.padEnd(widths[c] as number) : cell)).join('  ')}\n`,
    )
    .join('');
}
