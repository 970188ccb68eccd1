/** Files on disk: playbooks, and the directories the state file and reports go in. */
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { compareText } from './text-order.js';

/** The suffix of a playbook test (`fleetbook test`): `NAME.test.yaml` beside the playbook `NAME.yaml`. */
export const TEST_SUFFIX = '.test.yaml';

/** What the file system's errors mean, in words. */
const UNREADABLE: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'a directory, not a file',
  EACCES: 'permission denied',
  ENOTDIR: 'a part of the path is not a directory',
};

/** Why a file cannot be read, in words: `no such file or directory`, not `ENOENT: ..., open '...'`. */
export function whyUnreadable(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  return (code !== undefined && UNREADABLE[code]) || (e as Error).message;
}

/**
 * A file as given, or every *.yaml / *.yml below a directory, in a stable order; not the playbook tests
 * (*.test.yaml) beside them.
 */
export async function playbookFiles(path: string): Promise<string[]> {
  if (!(await stat(path)).isDirectory()) return [path];
  const out: string[] = [];
  for (const entry of (await readdir(path, { withFileTypes: true })).sort((a, b) =>
    compareText(a.name, b.name),
  )) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) out.push(...(await playbookFiles(full)));
    else if (/\.ya?ml$/.test(entry.name) && !entry.name.endsWith(TEST_SUFFIX)) out.push(full);
  }
  return out;
}

/** A path that names no playbooks: it cannot be read, or it is a directory without any. */
export class NoPlaybooks extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoPlaybooks';
  }
}

/**
 * The playbooks a path names (playbookFiles). One that cannot be read, or a directory without playbooks, throws
 * NoPlaybooks saying which and why: a wrong path is not a check of nothing that passes, nor a daemon that
 * acknowledges callbacks and runs nothing.
 */
export async function playbooksAt(path: string): Promise<string[]> {
  let found: string[];
  try {
    found = await playbookFiles(path);
  } catch (e) {
    throw new NoPlaybooks(`${(e as NodeJS.ErrnoException).path ?? path}: ${whyUnreadable(e)}`);
  }
  if (!found.length) throw new NoPlaybooks(`no playbooks (*.yaml, *.yml) in ${path}`);
  return found;
}

/**
 * Each file once, however it is named (`d` and `d/a.yaml`, `./a.yaml`, a link), under the name it first had,
 * in the order of first appearance. Synchronous: a command resolves its files one after another with nothing to
 * overlap, and an awaited realpath each left validate idle about 80 ms a thousand files.
 */
export function distinctFiles(files: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const f of files) {
    // A file that cannot be resolved (a broken link) is still one file: its reader says why it cannot be read.
    let key: string;
    try {
      key = realpathSync(f);
    } catch {
      key = resolve(f);
    }
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(f);
  }
  return out;
}

/**
 * `mkdir -p`, one level at a time. Node's own `mkdir(dir, { recursive: true })` never returns for a missing
 * directory below /proc (it retries that ENOENT forever); this fails with it.
 */
export function makeDirs(dir: string): void {
  const exists = (e: unknown) =>
    (e as NodeJS.ErrnoException).code === 'EEXIST' && statSync(dir).isDirectory();
  try {
    mkdirSync(dir);
  } catch (e) {
    if (exists(e)) return;
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(dir) === dir) throw e;
    makeDirs(dirname(dir));
    try {
      mkdirSync(dir);
    } catch (again) {
      if (!exists(again)) throw again;
    }
  }
}
