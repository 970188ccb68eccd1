/**
 * The reference of each action, from the catalog and its schemas: what it does, its arguments with types and
 * defaults, its output, the errors it can return, whether it is retry-safe, and an example step. docs/actions.md
 * (written by `npm run schemas`) and `fleetbook actions ACTION` print the same text.
 */
import { stringify } from 'yaml';
import { ENGINE_ACTION_NAMES, ENGINE_ACTIONS, hasEffect, isEngineAction } from '../actions/engine.js';
import { apiErrorCodes } from '../actions/selectors.js';
import { ACTIONS, CATALOG, isAction, type Operation } from '../api/catalog.js';
import { DEVICE_STATE_ERROR_TYPES } from '../api/device-errors.js';
import { withSchemaFor } from '../playbook/schema.js';
import { membersTable } from './schema-markdown.js';

type Schema = Record<string, unknown>;

/** Every action a step may use: the API's, then the engine's. */
export const ALL_ACTIONS: readonly string[] = [...ACTIONS, ...ENGINE_ACTION_NAMES];

const BODY_SHAPES: Record<Operation['errorShape'], string> = {
  errorCode: '`{ errorCode, errorMessage }`',
  error: '`{ error, error_description }`',
  'error+cause': '`{ error, error_description, cause }`',
};

/** Every engine action's first error: its arguments, as rendered, checked against its schema. */
const ENGINE_INPUT =
  '`FB_INPUT`: an argument, as the run rendered it, that its schema refuses (the argument named, what it takes and what it got); nothing is done, never retried';

/** Engine actions' errors: they make no API call (but notify.webhook's HTTP call). */
const ENGINE_ERRORS: Record<string, string[]> = {
  log: [ENGINE_INPUT],
  'notify.webhook': [
    ENGINE_INPUT,
    "the webhook's answer: `http.4xx`, `http.5xx`, `http.429` (any status), `network`, `timeout` in `retry.on`",
    '`FB_REFUSED`: an address that is not public (unless `FLEETBOOK_WEBHOOK_ALLOW` names it), a header fleetbook sets itself, or any URL on the embedded emulator (unless `FLEETBOOK_EMULATOR_WEBHOOKS=send`); never retried',
  ],
  'report.write': [
    `${ENGINE_INPUT}; also \`rows\` beside \`step\``,
    '`FB_REFUSED`: a path outside the reports directory; never retried',
  ],
  'ledger.query': [ENGINE_INPUT],
};

/** The reference of one action, as Markdown. */
export function actionReference(action: string): string {
  if (!isAction(action) && !isEngineAction(action)) throw new Error(`unknown action ${action}`);
  const args = (withSchemaFor(action) ?? {}) as Schema;
  const lines = [`### \`${action}\``, ''];
  if (isAction(action)) {
    const op: Operation = CATALOG[action];
    const query = op.query?.length ? `?${op.query.map((q) => `${q}=`).join('&')}` : '';
    lines.push(
      op.summary,
      '',
      `- \`${op.method} ${op.path}${query}\`, rate budget of the \`${op.area}\` area${op.paging ? `; every page is read (by \`${op.paging}\`)` : ''}`,
      `- ${op.mutating ? 'mutating: a dry run plans it and does not send it' : 'read-only: a dry run makes it'}`,
      `- ${
        op.retrySafe
          ? 'retry-safe: sent again after an unknown outcome (a 5xx, a connection lost after sending)'
          : 'not retry-safe: after an unknown outcome (a 5xx, a connection lost after sending) it is not sent again; 429, 503 and a refused connection are retried'
      }`,
      ...(op.removes
        ? [
            '- sent again after an unknown outcome and answered "not found", it succeeds: the earlier attempt removed it (said at info); "not found" to a first attempt is an error',
          ]
        : []),
      ...(op.strategy === 'deviceState'
        ? [
            '- carried out later, device by device: each device is `accepted`, then confirmed (`confirm:`), and `steps.<id>.devices` counts the outcomes',
          ]
        : []),
      ...(op.strategy === 'listing' ? ['- `steps.<id>.items`: the devices listed'] : []),
      ...(op.strategy === 'locate' || op.strategy === 'locationReport'
        ? ['- a location or an error per device: `steps.<id>.items`, `devices.retry` and `devices.ignore`']
        : []),
      '',
      `**Arguments** (\`with:\`; [input schema](../schemas/api/${action}.input.schema.json)${op.stepInput ? '; `fleetbook call` also takes a device group or a filter' : ''})`,
      '',
      ...membersTable(args),
      '',
      `**Output** (\`steps.<id>.output\`; [output schema](../schemas/api/${action}.output.schema.json))`,
      '',
      ...membersTable(op.output as unknown as Schema, false),
      '',
      '**Errors** ([errors.md](errors.md))',
      '',
      `- HTTP: 429, 408 and 5xx are \`retryable\`; an expired session is renewed by the client; any other 4xx is \`permanent\`. Body ${BODY_SHAPES[op.errorShape]}.`,
      `- API error codes: ${
        apiErrorCodes(action)
          ?.map((c) => `\`${c}\``)
          .join(', ') ??
        'the spec lists none for this area; any code the service sends (`http.4xx`, `http.5xx` select them)'
      }`,
      ...(op.strategy === 'deviceState'
        ? [`- per device: ${DEVICE_STATE_ERROR_TYPES.map((t) => `\`${t}\``).join(', ')} (permanent)`]
        : []),
      ...(op.deviceErrors ? ['- per device: every error type of spec section 7.3, each with its class'] : []),
    );
  } else {
    const engine = ENGINE_ACTIONS[action];
    lines.push(
      engine.summary,
      '',
      `- engine action: no API call${action === 'notify.webhook' ? ' (an HTTP call to the webhook)' : ''}`,
      `- ${hasEffect(action) ? 'acts outside the run: a dry run plans it and does not do it' : 'a dry run does it'}`,
      '',
      '**Arguments** (`with:`)',
      '',
      ...membersTable(args),
      '',
      '**Errors** ([errors.md](errors.md))',
      '',
      ...(ENGINE_ERRORS[action] ?? []).map((e) => `- ${e}`),
    );
  }
  lines.push('', '**Example**', '', '```yaml', exampleStep(action).trimEnd(), '```');
  return `${lines.join('\n')}\n`;
}

/**
 * Arguments the schemas require only in some cases (a condition, an if/then), which the example of the
 * action adds to the required ones.
 */
const EXAMPLE_ARGS: Record<string, Schema> = {
  'usage.aggregateAsync': { accountName: '0000123456-00001' },
  'usageTriggers.create': { smsPhoneNumbers: '5551234567' },
  'sensors.setConfiguration': { accountname: '0000123456-00001' },
  'usageTriggers.update': { thresholdValue: '90' },
  'triggers.createPayAsYouGo': {
    notification: { notificationFrequencyFactor: 0 },
    pricePlanTrigger: {
      payAsYouGo: {
        condition: {
          conditionType: 'Individual',
          comparator: 'gt',
          threshold: 5,
          thresholdUnit: 'GB',
          cycleType: 'Monthly',
        },
        action: {
          suspend: true,
          suspendDetails: {
            suspendFromAccounts: ['0000123456-00001'],
            suspendDuration: 'NextBillCycle',
            suspendOption: 'WithoutBilling',
          },
        },
      },
    },
  },
  'triggers.updateAccountGroupShare': {
    notification: { notificationFrequencyFactor: 0 },
    pricePlanTrigger: {
      accountGroupShare: {
        accountGroupShareIndividual: {
          action: { notify: { threshold: [{ carrierCode: 'example', percentage: { percentage90: true } }] } },
        },
      },
    },
  },
};

/** `over` laid on `base`, object by object. */
function merge(base: Schema, over: Schema = {}): Schema {
  const out = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? merge(b as Schema, v as Schema)
        : v;
  }
  return out;
}

/** An example step of `action`: its required arguments, each with a value its schema accepts. */
export function exampleStep(action: string): string {
  const args = merge(
    exampleValue((withSchemaFor(action) ?? {}) as Schema, '') as Schema,
    EXAMPLE_ARGS[action],
  );
  const id = (action.split('.').pop() as string).replace(/[^A-Za-z0-9_]/g, '_');
  const step = { id, uses: action, ...(Object.keys(args).length ? { with: args } : {}) };
  return stringify([step], { lineWidth: 0 });
}

/** Strings that fit the patterns of the catalog, tried in order. */
const SAMPLES = [
  '0000123456-00001',
  '990000862471854',
  '5551234567',
  '89148000000000000001',
  '2026-11-23T02:00:00Z',
  '2026-11-23',
  '11-23-2026',
  '6f1c2a3e-5b7d-4e8f-9a0b-1c2d3e4f5a6b',
  'location',
  '1',
  'A1B2C3D4',
  'example',
];

const NAMED: Record<string, unknown> = {
  accountName: '0000123456-00001',
  message: 'hello',
  path: 'example.csv',
  url: 'https://hooks.example.com/fleetbook',
};

function exampleValue(s: Schema, name: string): unknown {
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  if (!s.type && s.then) return exampleValue(s.then as Schema, name);
  const alternatives = ((s.anyOf ?? s.oneOf) as Schema[] | undefined) ?? [];
  if (!s.type && alternatives[0]) return exampleValue(alternatives[0], name);
  switch (s.type) {
    case 'boolean':
      return true;
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? Math.max(s.minimum, 1) : 1;
    case 'array':
      return Array.from({ length: Math.max(1, Number(s.minItems ?? 1)) }, (_, i) =>
        exampleValue((s.items ?? {}) as Schema, `${name}.${i}`),
      );
    case 'object':
      return exampleObject(s);
    default:
      return exampleString(s, name);
  }
}

function exampleObject(s: Schema): Schema {
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const required = new Set((s.required as string[] | undefined) ?? []);
  // A choice between members (devices, or a group): the first branch's.
  const first = (((s.anyOf ?? s.oneOf) as Schema[] | undefined) ?? [])[0];
  for (const r of (first?.required as string[] | undefined) ?? []) required.add(r);
  // A device: its kind, and an identifier of that kind.
  if (required.has('id') && required.has('kind')) {
    const kind = exampleValue(props.kind ?? {}, 'kind');
    return { id: kind === 'imei' ? '990000862471854' : exampleValue(props.id ?? {}, 'id'), kind };
  }
  const keys = [...required];
  for (const key of Object.keys(props)) if (keys.length < Number(s.minProperties ?? 0)) keys.push(key);
  const out: Schema = {};
  for (const key of keys) out[key] = exampleValue(props[key] ?? {}, key);
  return out;
}

function exampleString(s: Schema, name: string): unknown {
  if (name in NAMED) return NAMED[name];
  if (s.format === 'date-time') return '2026-11-23T02:00:00Z';
  if (s.format === 'date') return '2026-11-23';
  if (typeof s.pattern !== 'string') return 'example';
  const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern, 'u') : undefined;
  const min = Number(s.minLength ?? 0);
  const max = Number(s.maxLength ?? Infinity);
  const fits = (v: string) => (!pattern || pattern.test(v)) && v.length >= min && v.length <= max;
  return SAMPLES.find(fits) ?? 'example';
}

/** Every action's reference, grouped by area of the name, for docs/actions.md. */
export function actionsReference(): string {
  const lines = [
    '# Actions',
    '',
    '<!-- Written by `npm run schemas` from the action catalog (src/api/catalog/): do not edit. -->',
    '',
    'Every action a step can `uses:`, and `fleetbook call` can call: the API operations, then the engine actions',
    '(`fleetbook actions ACTION` prints one of these sections). An action takes one JSON object: the request',
    'body fields and the path (and query) parameters. Each API action has its input and output JSON Schema in',
    '`schemas/api/`. The error types and classes are in [errors.md](errors.md); the playbook language in',
    '[playbook.md](playbook.md).',
    '',
    '| action | method | path | does | mutating | retry-safe |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const action of ACTIONS) {
    const op: Operation = CATALOG[action];
    lines.push(
      `| [\`${action}\`](#${anchor(action)}) | ${op.method} | \`${op.path}\` | ${op.summary} | ${op.mutating ? 'yes' : 'no'} | ${op.retrySafe ? 'yes' : 'no'} |`,
    );
  }
  for (const action of ENGINE_ACTION_NAMES)
    lines.push(`| [\`${action}\`](#${anchor(action)}) | | engine | ${ENGINE_ACTIONS[action].summary} | | |`);
  let group = '';
  for (const action of ALL_ACTIONS) {
    const g = isEngineAction(action) ? 'engine actions' : (action.split('.')[0] as string);
    if (g !== group) lines.push('', `## ${g}`);
    group = g;
    lines.push('', actionReference(action).trimEnd());
  }
  return `${lines.join('\n')}\n`;
}

/** GitHub's anchor of a `### \`name\`` heading. */
function anchor(action: string): string {
  return action.toLowerCase().replace(/[^a-z0-9 -]/g, '');
}
