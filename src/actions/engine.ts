/**
 * Engine actions: steps that do not call the service. Their inputs are schemas like the API actions', so a
 * playbook's `with` is validated the same way for both.
 */
import Type from 'typebox';

const closed = <P extends Type.TProperties>(props: P, extra: object = {}) =>
  Type.Object(props, { additionalProperties: false, ...extra });

export const ENGINE_ACTIONS = {
  log: {
    summary: 'Write a line to the run log.',
    input: closed({
      message: Type.String(),
      level: Type.Optional(Type.String({ enum: ['debug', 'info', 'warn', 'error'] })),
      fields: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    }),
  },
  'notify.webhook': {
    summary: 'POST a JSON body to a URL (chat, paging, ticketing).',
    input: closed({
      url: Type.String({ minLength: 1 }),
      method: Type.Optional(Type.String({ enum: ['POST', 'PUT'] })),
      headers: Type.Optional(Type.Record(Type.String(), Type.String())),
      body: Type.Optional(Type.Unknown()),
    }),
  },
  'report.write': {
    summary: 'Write the per-device results of a step (or of the run) as CSV or JSON.',
    input: closed({
      path: Type.String({ minLength: 1 }),
      format: Type.Optional(
        Type.String({ enum: ['csv', 'json'], description: 'Default: from the file extension.' }),
      ),
      step: Type.Optional(
        Type.String({ description: 'The step whose devices to write; default every step of the run.' }),
      ),
    }),
  },
  'ledger.query': {
    summary:
      'Per-device outcomes of earlier runs, e.g. the devices that failed with SVC CACHE UNAVAILABLE last night.',
    input: closed({
      playbook: Type.Optional(Type.String({ description: 'Default: this playbook.' })),
      step: Type.Optional(Type.String()),
      outcome: Type.Optional(Type.String({ enum: ['succeeded', 'failed', 'skipped'] })),
      error: Type.Optional(
        Type.Union([Type.String(), Type.Array(Type.String())], {
          description: '7.3 type(s) or API error code(s).',
        }),
      ),
      runs: Type.Optional(
        Type.Union([Type.Literal('last'), Type.Integer({ minimum: 1 })], { description: 'Default: last.' }),
      ),
      since: Type.Optional(Type.String({ description: 'A duration back from now, e.g. 24h.' })),
    }),
  },
} as const;

export type EngineActionName = keyof typeof ENGINE_ACTIONS;
export const ENGINE_ACTION_NAMES = Object.keys(ENGINE_ACTIONS) as EngineActionName[];

export function isEngineAction(name: string): name is EngineActionName {
  return Object.hasOwn(ENGINE_ACTIONS, name);
}
