/** The playbook files a command's paths name, for `validate` and `fmt`. */
import { NoPlaybooks, playbooksAt } from '../util/files.js';

/**
 * The files of `paths`, in order: a file as given, a directory's playbooks (*.yaml, *.yml). A path that names
 * none (playbooksAt) is said on stderr and gives undefined (exit 2): in CI a check of nothing would pass silently.
 */
export async function namedPlaybookFiles(paths: string[]): Promise<string[] | undefined> {
  const named: string[] = [];
  for (const p of paths) {
    try {
      named.push(...(await playbooksAt(p)));
    } catch (e) {
      if (!(e instanceof NoPlaybooks)) throw e;
      process.stderr.write(`fleetbook: ${e.message}\n`);
      return undefined;
    }
  }
  return named;
}
