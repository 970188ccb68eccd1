/**
 * docs/playbook.md: the playbook language. The prose is playbook.template.md; the member tables come from the
 * playbook schema (src/playbook/schema.ts) and the table of validation rules from src/playbook/diagnostics.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { membersTable } from '../../src/cli/schema-markdown.js';
import { RULES } from '../../src/playbook/diagnostics.js';
import { PLAYBOOK_TOP, STEP_KINDS, STEP_SCHEMAS } from '../../src/playbook/schema.js';

type Schema = Record<string, unknown>;

const TEMPLATE = join(import.meta.dirname, 'playbook.template.md');

const generated: Record<string, () => string[]> = {
  top: () => membersTable(PLAYBOOK_TOP as unknown as Schema, true, 2),
  steps: () =>
    STEP_KINDS.flatMap((kind) => [
      `**${kind}**`,
      '',
      ...membersTable(STEP_SCHEMAS[kind] as unknown as Schema, true, 2),
      '',
    ]),
  rules: () => [
    '| rule | finds |',
    '| --- | --- |',
    ...Object.entries(RULES).map(([rule, what]) => `| \`${rule}\` | ${what.replace(/\|/g, '\\|')} |`),
  ],
};

export function playbookReference(): string {
  return readFileSync(TEMPLATE, 'utf8')
    .replace(
      /^<!-- The source of docs\/playbook\.md.*-->$/m,
      '<!-- Written by `npm run schemas` from scripts/docs/playbook.template.md and the playbook schema: do not edit. -->',
    )
    .replace(/^<!-- generated: (\w+) -->$/gm, (_m, name: string) => {
      const table = generated[name];
      if (!table) throw new Error(`playbook.template.md: no generated table ${name}`);
      return table().join('\n').trimEnd();
    });
}
