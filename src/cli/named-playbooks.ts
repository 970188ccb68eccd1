/** The playbook files a command's paths name, for `validate` and `fmt`. */
import { playbookFiles } from '../util/files.js';

/**
 * The files of `paths`, in order: a file as given, a directory's playbooks (*.yaml, *.yml). A path that does not
 * exist, or a directory without playbooks, is said on stderr and gives undefined (exit 2): a wrong path is not
 * a pass, and in CI a check of nothing would pass silently.
 */
export async function namedPlaybookFiles(paths: string[]): Promise<string[] | undefined> {
  const named: string[] = [];
  for (const p of paths) {
    let found: string[];
    try {
      found = await playbookFiles(p);
    } catch {
      process.stderr.write(`fleetbook: no such file or directory: ${p}\n`);
      return undefined;
    }
    if (!found.length) {
      process.stderr.write(`fleetbook: no playbooks (*.yaml, *.yml) in ${p}\n`);
      return undefined;
    }
    named.push(...found);
  }
  return named;
}
