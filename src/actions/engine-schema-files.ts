/**
 * The JSON Schema files under schemas/engine/: the arguments of each engine action, as schemas/api/ holds the
 * API actions' inputs. Emitted by `npm run schemas` and checked in, so that `fleetbook validate` types an engine
 * action's arguments from a file, as it does an API action's (playbook/types.ts), without loading TypeBox.
 */
import { DIALECT } from '../api/schema-files.js';
import { ENGINE_ACTION_NAMES, ENGINE_ACTIONS } from './engine.js';

const BASE = 'https://fleetbook.dev/schemas/engine/';

/** File name → schema, one `<action>.input.schema.json` per engine action. */
export function engineSchemaFiles(): Map<string, object> {
  const files = new Map<string, object>();
  for (const action of ENGINE_ACTION_NAMES) {
    const file = `${action}.input.schema.json`;
    files.set(file, {
      $schema: DIALECT,
      $id: `${BASE}${file}`,
      title: `${action} input`,
      description: `${ENGINE_ACTIONS[action].summary} An engine action: no API call.`,
      ...JSON.parse(JSON.stringify(ENGINE_ACTIONS[action].input)),
    });
  }
  return files;
}
