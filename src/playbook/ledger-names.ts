/**
 * A ledger query's literal `playbook`, among the playbooks checked together (`fleetbook validate DIR`, several
 * files): one that names none of them (`my-nigthly`) finds no run of it, and no device, and the run goes on as if
 * none had failed. Of one file checked alone nothing can be said: the playbook it queries may be anywhere.
 */
import { closest } from '../util/closest.js';
import type { LoadedPlaybook, Seg } from './checker.js';
import type { Diagnostic } from './diagnostics.js';
import type { Step } from './schema.js';

/** The name of a file's playbook: read from its text when it did not load (an error elsewhere in it). */
async function nameOf(r: LoadedPlaybook): Promise<string | undefined> {
  if (r.playbook) return r.playbook.name;
  // The document's `name` only: made whole into values, a file's mapping keys might be warned of on stderr.
  const doc = (await import('yaml')).parseDocument(r.source);
  const name = doc.contents && 'get' in doc.contents ? doc.get('name') : undefined;
  return typeof name === 'string' ? name : undefined;
}

/** Each ledger query of `steps` (those nested in a forEach, a parallel, an onError too) with its path. */
function eachQuery(steps: readonly Step[], path: Seg[], f: (s: Step, path: Seg[]) => void): void {
  steps.forEach((s, i) => {
    const at = [...path, i];
    if ('uses' in s && s.uses === 'ledger.query') f(s, at);
    if ('forEach' in s && Array.isArray(s.forEach.steps))
      eachQuery(s.forEach.steps as Step[], [...at, 'forEach', 'steps'], f);
    if ('parallel' in s && Array.isArray(s.parallel)) eachQuery(s.parallel as Step[], [...at, 'parallel'], f);
    if (Array.isArray(s.onError)) eachQuery(s.onError as Step[], [...at, 'onError'], f);
  });
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
      eachQuery(r.playbook?.steps ?? [], ['steps'], (s, path) => {
        const name = ((s as { with?: unknown }).with as Record<string, unknown> | undefined)?.playbook;
        if (typeof name === 'string' && !name.includes('${{') && !names.includes(name))
          found.push({ name, path: [...path, 'with', 'playbook'] });
      });
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
