/**
 * A daily schedule whose daemon has been down for three nights: the missed-nights fixture written into a
 * directory of the world with its hour half a day from now (no fire falls due while a test runs), and a state
 * file whose last recorded fire is three fires before the latest one due. The daemon tests of made-up and
 * backfilled nights start from here.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite.js';
import type { DaemonWorld } from './daemon.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'missed-nights', 'nightly.yaml');
const DAY = 86_400_000;

export interface MissedNights {
  /** The playbooks directory, holding `nightly.yaml`. */
  playbooks: string;
  file: string;
  state: string;
  /** The three fires missed, oldest first, as ISO times. */
  fires: string[];
}

export async function threeMissedNights(
  world: DaemonWorld,
  dir: string,
  stateName: string,
): Promise<MissedNights> {
  const now = Date.now();
  const hour = (new Date(now).getUTCHours() + 12) % 24;
  const playbooks = join(world.dir, dir);
  await mkdir(playbooks);
  const file = join(playbooks, 'nightly.yaml');
  await writeFile(file, (await readFile(FIXTURE, 'utf8')).replace("'0 HOUR ", `'0 ${hour} `));
  // Its latest fire, up to a day ago; the last one recorded, three fires before it.
  const d = new Date(now);
  let latest = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), hour);
  if (latest > now) latest -= DAY;
  const state = world.state(stateName);
  const store = new SqliteStore(state);
  await store.recordFire(`nightly#UTC#0 ${hour} * * *`, new Date(latest - 3 * DAY).toISOString());
  await store.close();
  return { playbooks, file, state, fires: [2, 1, 0].map((n) => new Date(latest - n * DAY).toISOString()) };
}
