/** `fleetbook validate PATH...` and `fleetbook schema`. */
import { readFileSync } from 'node:fs';
import type { LoadedPlaybook } from '../playbook/checker.js';
import { quickLoad } from '../playbook/quick-load.js';
import { formatText, type Diagnostic } from '../playbook/diagnostics.js';
import { generatedRules } from '../playbook/generated-rules.js';
import { ledgerPlaybookProblems } from '../playbook/ledger-names.js';
import { PlaybookNames } from '../playbook/names.js';
import { readSourceAmongSync } from '../playbook/source.js';
import type * as Loader from '../playbook/load.js';
import { distinctFiles, TEST_SUFFIX } from '../util/files.js';
import { namedPlaybookFiles } from './named-playbooks.js';
import { EXIT_USAGE } from './exit-codes.js';

/**
 * The playbook schema as emitted to schemas/playbook.schema.json (`npm run schemas`; a test keeps it equal to
 * what src/playbook/schema.ts builds), so that neither command loads the TypeBox schemas to start.
 */
export function printSchema(): number {
  process.stdout.write(readFileSync(new URL('../../schemas/playbook.schema.json', import.meta.url), 'utf8'));
  return 0;
}

export async function runValidate(paths: string[], format: string): Promise<number> {
  if (format !== 'text' && format !== 'json') {
    process.stderr.write(`fleetbook: --format must be text or json, got ${JSON.stringify(format)}\n`);
    return EXIT_USAGE;
  }
  const given = await namedPlaybookFiles(paths);
  if (!given) return EXIT_USAGE;
  // A playbook test named among playbooks (`playbooks/*.yaml` takes them too) is no playbook: said, not
  // checked against the playbook schema, which would give it an error for each member a playbook has.
  for (const f of given)
    if (f.endsWith(TEST_SUFFIX))
      process.stderr.write(`fleetbook: ${f} is a playbook test, not a playbook: fleetbook test checks it\n`);
  const named = given.filter((f) => !f.endsWith(TEST_SUFFIX));
  // A file named twice (`d` and `d/a.yaml`) is one playbook: checked twice, it would be its own duplicate name.
  const files = distinctFiles(named);
  if (!files.length) {
    process.stderr.write(`fleetbook: no playbooks among ${paths.join(', ')}\n`);
    return EXIT_USAGE;
  }
  // A valid playbook is checked with the rules generated at build time; anything else, and everything when
  // there are none, by the full loader, loaded on first use (it brings TypeBox and compiles schemas).
  const rules = generatedRules();
  let full: typeof Loader | undefined;
  const names = new PlaybookNames();
  const loaded: LoadedPlaybook[] = [];
  const found: Diagnostic[][] = [];
  for (const f of files) {
    const text = readSourceAmongSync(f);
    const r: LoadedPlaybook = text.diagnostics.length
      ? text
      : ((rules && quickLoad(text.source, f, rules)) ??
        (full ??= await import('../playbook/load.js')).loadPlaybook(text.source, f));
    const duplicate = await names.check(r);
    loaded.push(r);
    found.push(duplicate ? [...r.diagnostics, duplicate] : r.diagnostics);
  }
  // Known once every file is read: a ledger query may name a playbook of a later file.
  const queried = await ledgerPlaybookProblems(loaded);
  const all: Diagnostic[] = [];
  const texts: string[] = [];
  loaded.forEach((r, i) => {
    for (const d of [...found[i]!, ...queried[i]!]) {
      all.push(d);
      texts.push(formatText(d, r.source));
    }
  });
  const errors = all.filter((d) => d.severity === 'error').length;
  if (format === 'json') process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
  else {
    if (texts.length) process.stdout.write(`${texts.join('\n')}\n`);
    const warnings = all.length - errors;
    process.stderr.write(
      `${files.length} playbook${files.length === 1 ? '' : 's'} checked: ${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}\n`,
    );
  }
  return errors ? 1 : 0;
}
