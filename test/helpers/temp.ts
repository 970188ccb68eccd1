/**
 * The tests' temp folders, removed when the process that made them exits: `npm test` leaves nothing behind in
 * the system's temp folder (a run of the 100,000-device report alone leaves 20 MB).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** A new folder `<tmpdir>/<prefix>XXXXXX`, removed at exit. */
export function tempDir(prefix: string): string {
  if (!made.length) process.once('exit', removeAll);
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

function removeAll(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
