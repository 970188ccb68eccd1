/**
 * The one reader of the YAML files fleetbook is given (playbooks, playbook tests), for every command that reads
 * one: validate, serve, run, test, fmt. YAML is Unicode: decoded as UTF-8 regardless, a byte that is not would
 * become U+FFFD and run as mangled text, so such a file is refused by a `yaml` error at that byte instead. A
 * UTF-8 byte order mark is kept, as the YAML parsers skip it.
 */
import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { whyUnreadable } from '../util/files.js';
import type * as YamlModule from 'yaml';
import type { Document } from 'yaml';
import type { Diagnostic } from './diagnostics.js';

/** A file's text, and the error that refuses it when its bytes are not UTF-8 (none when they are). */
export interface SourceText {
  file: string;
  /** The text; with U+FFFD for the bytes that are not UTF-8, to show the line of the error. */
  source: string;
  diagnostics: Diagnostic[];
}

export async function readSource(file: string): Promise<SourceText> {
  return decodeSource(await readFile(file), file);
}

/**
 * `readSource` of a file among others (found in a directory, or one of several named): one that cannot be read
 * (a broken link, no permission) is an error of its own at 1:1, and the others are still read.
 */
export async function readSourceAmong(file: string): Promise<SourceText> {
  try {
    return await readSource(file);
  } catch (e) {
    return unreadable(file, e);
  }
}

/**
 * `readSourceAmong`, synchronously: for a command that reads many small files one after another with nothing to
 * overlap (validate), where each of an async read's four steps would wait a turn of the event loop: 1,000
 * playbooks took 1.2 s to validate, half of it idle, against 0.45 s read this way.
 */
export function readSourceAmongSync(file: string): SourceText {
  try {
    return decodeSource(readFileSync(file), file);
  } catch (e) {
    return unreadable(file, e);
  }
}

function unreadable(file: string, e: unknown): SourceText {
  const message = `the file cannot be read: ${whyUnreadable(e)}`;
  return {
    file,
    source: '',
    diagnostics: [{ file, line: 1, column: 1, message, rule: 'yaml', severity: 'error' }],
  };
}

export function decodeSource(buffer: Buffer, file: string): SourceText {
  const source = buffer.toString('utf8');
  if (isUtf8(buffer)) return { file, source, diagnostics: [] };
  const at = firstNotUtf8(buffer);
  // latin1: one character per byte.
  const before = buffer.toString('latin1', 0, at);
  const lineStart = before.lastIndexOf('\n') + 1;
  // The bytes before it on its line are UTF-8: its column counts their characters, as the YAML parsers do.
  const column = buffer.toString('utf8', lineStart, at).length + 1;
  const byte = `0x${(buffer[at] as number).toString(16).toUpperCase().padStart(2, '0')}`;
  return {
    file,
    source,
    diagnostics: [
      {
        file,
        line: before.split('\n').length,
        column,
        message: `the file is not UTF-8: byte ${byte} is not part of a UTF-8 character (YAML is Unicode: save the file as UTF-8)`,
        rule: 'yaml',
        severity: 'error',
      },
    ],
  };
}

/**
 * How playbooks and playbook tests are parsed: a key given twice is an error, and merge keys (`<<: *defaults`,
 * as Ansible and Compose files share a block) are merged, a mapping's own keys over the merged ones.
 */
export const YAML_OPTIONS = { uniqueKeys: true, prettyErrors: false, merge: true } as const;

/**
 * The YAML parser's message for one of its errors in a file that holds `one` (a playbook, a playbook test): its
 * first line, in fleetbook's words where it would send the reader to a call of the parser's library.
 */
export function yamlMessage(e: { code: string; message: string }, one: string): string {
  if (e.code === 'MULTIPLE_DOCS')
    return `the file holds several YAML documents, the second from here: ${one} is one document`;
  return e.message.split('\n')[0]?.trim() ?? e.message;
}

/**
 * The first thing of `doc` that YAML allows and a playbook or a test file cannot hold, at its offset: an alias
 * inside the node its anchor names (the data would never end), or a map or a list as a key (it would become
 * its text, with a warning of the library on stderr). `y` is the `yaml` module, which callers load as they
 * choose.
 */
export function yamlShapeProblem(
  doc: Document,
  y: Pick<typeof YamlModule, 'visit' | 'isCollection'>,
): { offset: number; message: string } | undefined {
  let found: { offset: number; message: string } | undefined;
  y.visit(doc, {
    Alias(_key, node, path) {
      const target = node.resolve(doc);
      if (!target || !path.includes(target)) return undefined;
      found = {
        offset: node.range?.[0] ?? 0,
        message: `alias *${node.source} is inside the node its anchor names: the data would never end`,
      };
      return y.visit.BREAK;
    },
    Pair(_key, pair) {
      if (!y.isCollection(pair.key)) return undefined;
      found = {
        offset: pair.key.range?.[0] ?? 0,
        message: 'a key is a name, not a map or a list: write it as plain text',
      };
      return y.visit.BREAK;
    },
  });
  return found;
}

/**
 * The offset of the first byte that does not begin a well-formed UTF-8 sequence (RFC 3629: no overlong forms,
 * no surrogates, nothing above U+10FFFF), or -1.
 */
function firstNotUtf8(b: Buffer): number {
  for (let i = 0; i < b.length;) {
    const lead = b[i] as number;
    const more =
      lead < 0x80 ? 0 : lead < 0xc2 ? -1 : lead < 0xe0 ? 1 : lead < 0xf0 ? 2 : lead < 0xf5 ? 3 : -1;
    if (more < 0) return i;
    // The second byte's range narrows after E0 (overlong), ED (surrogates), F0 (overlong) and F4 (too high).
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k <= more; k++) {
      const c = b[i + k];
      if (c === undefined || c < (k === 1 ? low : 0x80) || c > (k === 1 ? high : 0xbf)) return i;
    }
    i += more + 1;
  }
  return -1;
}
