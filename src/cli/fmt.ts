/**
 * `fleetbook fmt [PATH...] [--check]`: quotes the expressions that only fleetbook reads as YAML (unquoted
 * `${{ }}` inside `{ }` or `[ ]`, or holding `: ` or ` #`), in place, and changes nothing else: comments,
 * order, blank lines and every other character stay as they are.
 */
import { writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { LineCounter, parseDocument, visit } from 'yaml';
import { protectExpressions } from '../playbook/protect.js';
import { readSourceAmong, yamlMessage } from '../playbook/source.js';
import { findUnquoted, quoteScalar, restoreDocument } from '../playbook/unquoted.js';
import { distinctFiles } from '../util/files.js';
import { namedPlaybookFiles } from './named-playbooks.js';
import { EXIT_USAGE } from './exit-codes.js';

/** The playbooks `fleetbook fmt` formats when given no path. */
export const DEFAULT_FMT_PATH = 'playbooks';

/** A playbook's text with its expressions quoted, or why it cannot be formatted. */
export type Formatted = { text: string; changed: boolean } | { problem: string; line?: number; col?: number };

export function formatPlaybook(source: string): Formatted {
  const safe = protectExpressions(source);
  const lc = new LineCounter();
  const doc = parseDocument(safe.text, { lineCounter: lc, uniqueKeys: true, prettyErrors: false });
  const error = doc.errors[0];
  if (error) {
    const { line, col } = lc.linePos(error.pos[0]);
    return { problem: `${yamlMessage(error, 'a playbook')} (fix the YAML first)`, line, col };
  }
  const found = findUnquoted(doc, safe, visit);
  if (!found.length) return { text: source, changed: false };
  let text = source;
  // From the end, so that the offsets of the ones before stay true.
  for (const u of found.sort((a, b) => b.start - a.start))
    text = text.slice(0, u.start) + quoteScalar(u.value) + text.slice(u.end);
  // The result must be YAML alone, and mean what the original meant to fleetbook.
  restoreDocument(doc, safe, visit);
  const plain = parseDocument(text, { uniqueKeys: true });
  if (plain.errors.length || !isDeepStrictEqual(plain.toJS(), doc.toJS())) {
    return { problem: 'quoting its expressions would change its meaning; quote them by hand' };
  }
  return { text, changed: true };
}

export async function fmtCommand(paths: string[], flags: { check?: boolean }): Promise<number> {
  const named = await namedPlaybookFiles(paths.length ? paths : [DEFAULT_FMT_PATH]);
  if (!named) return EXIT_USAGE;
  const files = distinctFiles(named);
  let changed = 0;
  let failed = 0;
  for (const file of files) {
    const { source, diagnostics } = await readSourceAmong(file);
    const unread = diagnostics[0];
    const r: Formatted = unread
      ? { problem: unread.message, line: unread.line, col: unread.column }
      : formatPlaybook(source);
    if ('problem' in r) {
      failed++;
      process.stderr.write(`${file}${r.line ? `:${r.line}:${r.col}` : ''}: ${r.problem}\n`);
      continue;
    }
    if (!r.changed) continue;
    changed++;
    if (!flags.check) writeFileSync(file, r.text);
    process.stdout.write(`${file}\n`);
  }
  const n = `${files.length} file${files.length === 1 ? '' : 's'}`;
  process.stderr.write(
    flags.check
      ? `${n} checked: ${changed} would be reformatted${failed ? `, ${failed} could not be read` : ''}\n`
      : `${n} checked: ${changed} reformatted${failed ? `, ${failed} could not be read` : ''}\n`,
  );
  return failed || (flags.check && changed) ? 1 : 0;
}
