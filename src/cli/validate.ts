/** `fleetbook validate PATH...` and `fleetbook schema`. */
import { readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { formatText, type Diagnostic } from '../playbook/diagnostics.js';
import { loadPlaybook } from '../playbook/load.js';
import { playbookSchema } from '../playbook/schema.js';

export function printSchema(): number {
  process.stdout.write(`${JSON.stringify(playbookSchema(), null, 2)}\n`);
  return 0;
}

export async function runValidate(paths: string[], format: string): Promise<number> {
  if (format !== 'text' && format !== 'json') {
    process.stderr.write(`fleetbook: --format must be text or json, got ${JSON.stringify(format)}\n`);
    return 2;
  }
  const files: string[] = [];
  for (const p of paths) {
    try {
      files.push(...(await playbookFiles(p)));
    } catch {
      process.stderr.write(`fleetbook: no such file or directory: ${p}\n`);
      return 2;
    }
  }
  const all: Diagnostic[] = [];
  const texts: string[] = [];
  for (const f of files) {
    // Synchronous reads: one small file after another, and nothing else to overlap with.
    const r = loadPlaybook(readFileSync(f, 'utf8'), f);
    all.push(...r.diagnostics);
    for (const d of r.diagnostics) texts.push(formatText(d, r.source));
  }
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

/** A file as given, or every *.yaml / *.yml below a directory, in a stable order. */
async function playbookFiles(path: string): Promise<string[]> {
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
