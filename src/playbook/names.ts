/**
 * The names of the playbooks checked together (`fleetbook validate DIR`, the daemon's playbooks): runs, the store,
 * the console and `POST /playbooks/{name}/runs` know a playbook by its name, so two files of one name cannot both
 * be served.
 */
import type { LoadedPlaybook } from './checker.js';
import type { Diagnostic } from './diagnostics.js';

/** The longest playbook name (the schema's `maxLength`, and the daemon's longest path parameter). */
export const MAX_PLAYBOOK_NAME = 100;

export class PlaybookNames {
  private readonly files = new Map<string, string>();

  /**
   * Takes the loaded playbook of a file (nothing when it did not load): a diagnostic at its `name` when an
   * earlier file's playbook has that name.
   */
  async check(r: LoadedPlaybook): Promise<Diagnostic | undefined> {
    const name = r.playbook?.name;
    if (name === undefined) return undefined;
    const first = this.files.get(name);
    if (first === undefined) {
      this.files.set(name, r.file);
      return undefined;
    }
    // The full loader, with positions, only for a file that has the problem.
    const { line, column } = (await import('./load.js')).positionIn(r.source, r.file, ['name']);
    return {
      file: r.file,
      line,
      column,
      message: `playbook name \`${name}\` is also the name of ${first}`,
      rule: 'duplicate-name',
      severity: 'error',
    };
  }
}
