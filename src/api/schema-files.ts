/**
 * The JSON Schema files under schemas/api/, derived from the TypeBox schemas of the catalog. They are emitted
 * by `npm run schemas` and checked in, so that editors and other tools can read them; a test fails when they
 * are stale.
 */
import { ACTIONS, CATALOG, type Operation } from './catalog.js';

export const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const BASE = 'https://fleetbook.dev/schemas/api/';

type Part = 'input' | 'request' | 'output' | 'page';

/** File name → schema, for every action's input and output (and one request or page where they differ). */
export function apiSchemaFiles(): Map<string, object> {
  const files = new Map<string, object>();
  const index: Record<string, unknown> = {};
  for (const action of ACTIONS) {
    const op: Operation = CATALOG[action];
    const parts: Partial<Record<Part, object>> = { input: op.input, output: op.output };
    if (op.request) parts.request = op.request;
    if (op.page) parts.page = op.page;
    const names: Record<string, string> = {};
    for (const [part, schema] of Object.entries(parts) as [Part, object][]) {
      const file = `${action}.${part}.schema.json`;
      names[part] = file;
      files.set(file, {
        $schema: DIALECT,
        $id: `${BASE}${file}`,
        title: `${action} ${part}`,
        description: part === 'input' ? `${op.summary} ${op.method} ${op.path}` : undefined,
        ...JSON.parse(JSON.stringify(schema)),
      });
    }
    index[action] = {
      method: op.method,
      path: op.path,
      area: op.area,
      mutating: op.mutating,
      retrySafe: op.retrySafe,
      ...(op.strategy ? { strategy: op.strategy } : {}),
      ...(op.devicesIn ? { devicesIn: op.devicesIn } : {}),
      ...names,
    };
  }
  files.set('index.json', index);
  return files;
}

export function render(schema: object): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}
