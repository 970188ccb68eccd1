/**
 * The generated reference in docs/: each file and the function that writes it. `npm run schemas` writes
 * them, formatted as prettier formats Markdown; test/docs/reference-files.test.ts checks they are up to date.
 */
import { format, resolveConfig } from 'prettier';
import { actionsReference } from '../../src/cli/actions-reference.js';
import { errorsReference } from './errors.js';
import { eventsReference } from './events.js';
import { playbookReference } from './playbook.js';

export const DOCS: Record<string, () => string> = {
  'actions.md': actionsReference,
  'errors.md': errorsReference,
  'events.md': eventsReference,
  'playbook.md': playbookReference,
};

/** The text of docs/`name`, as prettier formats it. */
export async function renderDoc(name: string, file: string): Promise<string> {
  const generate = DOCS[name];
  if (!generate) throw new Error(`no generated doc ${name}`);
  return format(generate(), { ...(await resolveConfig(file)), parser: 'markdown' });
}
