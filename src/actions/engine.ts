/**
 * Engine actions: steps that do not call the service. Their inputs are schemas like the API actions', so a
 * playbook's `with` is validated the same way for both. The schemas (engine-schemas.ts) are loaded when one is
 * first read.
 */
import { onFirstUse } from '../util/on-first-use.js';
import type * as Schemas from './engine-schemas.js';

const E = onFirstUse<typeof Schemas>(import.meta.url, './engine-schemas.js');

export const ENGINE_ACTIONS = {
  log: {
    summary: 'Write a line to the run log.',
    get input() {
      return E().LogArgs;
    },
  },
  'notify.webhook': {
    summary: 'POST a JSON body to a URL (chat, paging, ticketing).',
    /** Acts outside the run (a dry run plans it and does not send it). */
    effect: true,
    get input() {
      return E().WebhookArgs;
    },
  },
  'report.write': {
    summary:
      'Write the per-device results of a step (or of the run), with the data each device returned, or any list of objects, as CSV or JSON.',
    /** Acts outside the run: a dry run would overwrite a real report with planned outcomes. */
    effect: true,
    get input() {
      return E().ReportArgs;
    },
  },
  'ledger.query': {
    summary:
      'Per-device outcomes of earlier runs, e.g. the devices that failed with SVC CACHE UNAVAILABLE last night.',
    get input() {
      return E().LedgerQueryArgs;
    },
  },
} as const;

export type EngineActionName = keyof typeof ENGINE_ACTIONS;
export const ENGINE_ACTION_NAMES = Object.keys(ENGINE_ACTIONS) as EngineActionName[];

export function isEngineAction(name: string): name is EngineActionName {
  return Object.hasOwn(ENGINE_ACTIONS, name);
}

/** Whether an engine action acts outside the run (sends, writes), so that a dry run only plans it. */
export function hasEffect(name: string): boolean {
  return isEngineAction(name) && 'effect' in ENGINE_ACTIONS[name];
}
