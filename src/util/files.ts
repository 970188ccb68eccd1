/** Playbook files on disk. */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** A file as given, or every *.yaml / *.yml below a directory, in a stable order. */
export async function playbookFiles(path: string): Promise<string[]> {
  if (!(await stat(path)).isDirectory()) return [path];
  const out: string[] = [];
  for (const entry of (await readdir(path, { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) out.push(...(await playbookFiles(full)));
    else if (/\.ya?ml$/.test(entry.name)) out.push(full);
  }
  return out;
}
