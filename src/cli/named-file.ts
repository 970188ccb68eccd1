/** Files named on the command line: read, or a clear error that names them. */
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../errors.js';
import { whyUnreadable } from '../util/files.js';

/** `label: why` for a path named on the command line that cannot be read: `--event /tmp/x.json: no such file or directory`. */
export function unreadable(label: string, e: unknown): string {
  return `${label}: ${whyUnreadable(e)}`;
}

/**
 * The text of a file named on the command line (`-`: stdin). One that cannot be read is a ConfigError, which
 * the CLI prints as `unreadable` says and exits 2 for, as for any wrong argument.
 */
export async function readNamedFile(file: string, label = file): Promise<string> {
  return (await readNamedBytes(file, label)).toString('utf8');
}

/** `readNamedFile`, as bytes: for a file whose text has its own reader (a playbook: source.ts). */
export async function readNamedBytes(file: string, label = file): Promise<Buffer> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
  try {
    return await readFile(file);
  } catch (e) {
    throw new ConfigError(unreadable(label, e));
  }
}
