/**
 * Watching the playbook files of a `--playbooks` path for the daemon's reloads. Each directory of the tree is
 * watched by itself, by name: Node 20's `fs.watch(dir, { recursive: true })` on Linux watches each file by its
 * inode, and stops seeing a file once an editor (or `sed -i`, or a deployment's swap) has replaced it by a
 * rename, which is how most saves are made. A directory's watch sees every later write and rename of its entries.
 */
import { readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { TEST_SUFFIX } from '../util/files.js';

/** A name `playbookFiles` reads: *.yaml or *.yml, not a playbook test. */
const isPlaybookName = (name: string) => /\.ya?ml$/.test(name) && !name.endsWith(TEST_SUFFIX);

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** `dir` and every directory below it that can be read. */
function directoriesUnder(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [dir];
  }
  return [dir, ...entries.filter((e) => e.isDirectory()).flatMap((e) => directoriesUnder(join(dir, e.name)))];
}

/**
 * Calls `changed` when a playbook file of `path` (a directory, searched as `playbookFiles` searches it, or a file)
 * is written, added, removed or renamed, or a directory below it comes or goes. Changes to other files (a playbook
 * test, the state file, an editor's swap file) are not told. `failed` hears of a watch that stopped. Returns what
 * stops watching. Throws when `path` cannot be watched at all (it is gone; the system is out of watches).
 */
export function watchPlaybookFiles(
  path: string,
  changed: () => void,
  failed: (e: Error) => void,
): () => void {
  const tree = statSync(path).isDirectory();
  const only = tree ? undefined : basename(path);
  const watchers = new Map<string, FSWatcher>();
  const heard = (dir: string) => (_event: string, name: string | Buffer | null) => {
    // A watch that cannot tell which entry changed says nothing of it: a change, maybe.
    if (name === null) return changed();
    const entry = name.toString();
    if (only !== undefined) {
      if (entry === only) changed();
    } else if (isPlaybookName(entry)) changed();
    else if (watchers.has(join(dir, entry)) || isDirectory(join(dir, entry))) {
      // A directory came, went, or was renamed: its playbooks with it.
      try {
        sync();
      } catch (e) {
        failed(e as Error);
      }
      changed();
    }
  };
  const add = (dir: string) => {
    const w = watch(dir, heard(dir));
    w.on('error', (e) => {
      w.close();
      watchers.delete(dir);
      // The directory itself gone is told by its parent's watch, or by the reload that no longer finds it.
      if (isDirectory(dir)) failed(e);
    });
    watchers.set(dir, w);
  };
  const sync = () => {
    const dirs = new Set(tree ? directoriesUnder(path) : [dirname(path)]);
    for (const [dir, w] of watchers)
      if (!dirs.has(dir)) {
        w.close();
        watchers.delete(dir);
      }
    for (const dir of dirs)
      if (!watchers.has(dir))
        try {
          add(dir);
        } catch (e) {
          if (dir === path || dir === dirname(path)) throw e;
          failed(e as Error);
        }
  };
  sync();
  return () => {
    for (const w of watchers.values()) w.close();
    watchers.clear();
  };
}
