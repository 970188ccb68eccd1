/** The files of schemas/events/, written by `npm run schemas` and checked by a test. */
import { DIALECT } from '../api/schema-files.js';
import { EVENT_SERVICES, EXAMPLES, SCHEMAS } from './index.js';

/** File name → each service's event schema, with its example. */
export function eventSchemaFiles(): Map<string, object> {
  const files = new Map<string, object>();
  for (const service of EVENT_SERVICES) {
    const file = `${service}.schema.json`;
    files.set(file, {
      $schema: DIALECT,
      $id: `https://fleetbook.dev/schemas/events/${file}`,
      title: `${service} event`,
      ...JSON.parse(JSON.stringify(SCHEMAS[service])),
      examples: [EXAMPLES[service]],
    });
  }
  return files;
}
