/**
 * A ledger query's literal `playbook`, among the playbooks checked together (`fleetbook validate DIR`, several
 * files): one that names none of them (`my-nigthly`) finds no run of it, and no device, and the run goes on as if
 * none had failed. Of one file checked alone nothing can be said: the playbook it queries may be anywhere.
 */
import { closest } from '../util/closest.js';
import type { LoadedPlaybook, Seg } from './checker.js';
import type { Diagnostic } from './diagnostics.js';
import type { Step } from './schema.js';
import { eachStep } from './step-tree.js';

/** The name of a file's playbook: read from its text when it did not load (an error elsewhere in it). */
async function nameOf(r: LoadedPlaybook): Promise<string | undefined> {
  if (r.playbook) return r.playbook.name;
  // The document's `name` only: made whole into values, a file's mapping keys might be warned of on stderr.
  const doc = (await import('yaml')).parseDocument(r.source);
  const name = doc.contents && 'get' in doc.contents ? doc.get('name') : undefined;
  return typeof name === 'string' ? name : undefined;
}

/**
 * For each of `loaded` (the files checked together, in order), the warnings at the literal `playbook` of its
 * ledger queries that name none of their playbooks (an expression is not judged). None for one file alone.
 */
export async function ledgerPlaybookProblems(loaded: readonly LoadedPlaybook[]): Promise<Diagnostic[][]> {
  if (loaded.length < 2) return loaded.map(() => []);
  const names = [...new Set((await Promise.all(loaded.map(nameOf))).filter((n) => n !== undefined))];
  return Promise.all(
    loaded.map(async (r) => {
      const found: { name: string; path: Seg[] }[] = [];
      const query = (s: Step, _within: Step | undefined, path: Seg[]) => {
        if (!('uses' in s) || s.uses !== 'ledger.query') return;
        const name = ((s as { with?: unknown }).with as Record<string, unknown> | undefined)?.playbook;
        if (typeof name === 'string' && !name.includes('${{') && !names.includes(name))
          found.push({ name, path: [...path, 'with', 'playbook'] });
      };
      eachStep(r.playbook?.steps, query, ['steps']);
      eachStep(r.playbook?.finally, query, ['finally']);
      if (!found.length) return [];
      // The full loader, with positions, only for a file that has the problem.
      const { positionIn } = await import('./load.js');
      return found.map(({ name, path }): Diagnostic => {
        const near = closest(name, names, 1);
        return {
          file: r.file,
          ...positionIn(r.source, r.file, path),
          message: `ledger.query: no playbook checked with this one is named \`${name}\`${near.length ? ` (did you mean \`${near[0]}\`?)` : ''}: the query would find no run of it, and no device`,
          rule: 'ledger-playbook',
          severity: 'warning',
        };
      });
    }),
  );
}
