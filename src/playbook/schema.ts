/**
 * The playbook language as JSON Schema 2020-12 (`schemas/playbook.schema.json`, `fleetbook schema`).
 *
 * Each action's `with` is checked against that action's request schema, with an expression allowed in place
 * of any value, so an editor running yaml-language-server completes and flags action arguments.
 */
import Type from 'typebox';
import { ACTIONS, CATALOG, type Operation } from '../api/catalog.js';
import { DEVICE_KINDS, kindEnum } from '../api/schemas/common.js';
import { CALLBACK_SERVICES } from '../api/callback-services.js';
// eslint-disable-next-line no-restricted-imports -- layer exception: what a playbook may write (engine action declarations, selectors, static checks) still lives in src/actions/; it belongs below src/playbook/
import { ENGINE_ACTIONS, ENGINE_ACTION_NAMES } from '../actions/engine.js';
import { DIALECT } from '../api/schema-files.js';
import { DURATION_PATTERN, DURATION_TEXT } from './duration.js';
import { MAX_PLAYBOOK_NAME } from './names.js';

const closed = <P extends Type.TProperties>(props: P, extra: object = {}) =>
  Type.Object(props, { additionalProperties: false, ...extra });

/** A string holding at least one `${{ }}`: the alternative to any value inside `with`. */
export const EXPRESSION = {
  type: 'string',
  pattern: '\\$\\{\\{',
  'x-expr': true,
  description: 'A ${{ expression }}.',
};

const Duration = Type.String({
  pattern: DURATION_PATTERN,
  'x-rule': 'duration',
  description: DURATION_TEXT,
});
/** A Duration that the runner gives a default when it is left out (runner/plan.ts): `default` says which. */
const DurationOr = (dflt: string) => Type.String({ ...Duration, default: dflt });
const Expr = Type.String({
  pattern: '^\\s*\\$\\{\\{[\\s\\S]*\\}\\}\\s*$',
  description: 'A ${{ expression }}.',
});
const Condition = Type.Union([Expr, Type.Boolean()], { description: 'A ${{ expression }} or true/false.' });
const StepId = Type.String({
  pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$',
  maxLength: 64,
  description: 'Letters, digits and underscores, so that `steps.<id>` works in expressions.',
});
const Selectors = (options: { description?: string } = {}) =>
  Type.Array(Type.String({ minLength: 1 }), { minItems: 1, ...options });

const Retry = closed({
  on: Type.Optional(Selectors({ description: 'Default [retryable].' })),
  maxAttempts: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, description: 'Attempts in all. Default 3.' }),
  ),
  backoff: Type.Optional(
    Type.String({ enum: ['exponential', 'fixed'], description: 'Default exponential.' }),
  ),
  delay: Type.Optional(DurationOr('1s')),
  maxDelay: Type.Optional(DurationOr('1m')),
  jitter: Type.Optional(
    Type.String({ enum: ['full', 'none'], description: 'Default full (none with backoff: fixed).' }),
  ),
});

const DevicePolicy = closed({
  retry: Type.Optional(
    Type.Array(
      closed({
        on: Selectors(),
        with: Type.Optional(
          Type.Record(Type.String(), Type.Unknown(), { description: 'Arguments changed for the retry.' }),
        ),
        maxAttempts: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: 20,
            description: 'Attempts in all, the first included. Default 2.',
          }),
        ),
        delay: Type.Optional(Duration),
      }),
      { minItems: 1 },
    ),
  ),
  ignore: Type.Optional(
    Type.Array(Type.String({ minLength: 1 }), {
      description: 'Per-device error types accepted as outcomes.',
    }),
  ),
  toleratedFailurePercent: Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: 100,
      description:
        "Fail the step when more than this share of its devices failed or stayed unconfirmed. Unset: the step succeeds whatever its devices' outcomes.",
    }),
  ),
});

/** A device listing's `items`: by which identifier each listed device becomes an item (validate: items-kind). */
const ListingItems = closed(
  {
    kind: Type.String({
      enum: kindEnum(DEVICE_KINDS),
      'x-rule': 'items-kind',
      description:
        'Each listed device becomes one item `{ id, kind }` by its identifier of this kind; a device without one is left out, and counted in `output.leftOut`.',
    }),
  },
  {
    description:
      "A device listing (devices.list, groups.get) only: the identifier each listed device is an item by. Without it, the kind the first `filter.deviceIdentifierFilters` entry names, else the device's first identifier.",
  },
);

const WaitCompletion = closed({
  for: Type.Literal('completion'),
  timeout: Type.Optional(DurationOr('2h')),
  pollInterval: Type.Optional(DurationOr('5s')),
});

const Confirm = closed(
  {
    timeout: Type.Optional(DurationOr('10m')),
    pollInterval: Type.Optional(DurationOr('5s')),
  },
  {
    description:
      "A device-state action: how long to wait for each device to be confirmed (timeout) and how often to ask the service meanwhile (pollInterval). A device not confirmed in time is unconfirmed. After an answer lost once the service may have acted, also how long the devices' state is watched before the request is sent again for those unchanged.",
  },
);

const WaitEvent = closed({
  event: closed({
    service: Type.String({ enum: [...CALLBACK_SERVICES] }),
    match: Type.Optional(Expr),
  }),
  timeout: Duration,
  poll: Type.Optional(
    closed({
      uses: Type.String(),
      with: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      until: Expr,
      interval: Type.Optional(Duration),
    }),
  ),
});

/**
 * The step kinds. `nested` is the schema of a step inside another (rescue steps, forEach and parallel bodies):
 * a reference for the whole-playbook schema, any object for the loader, which checks nested steps one by one.
 */
function stepKinds<N extends Type.TSchema, U extends Type.TSchema>(nested: N, uses: U) {
  const common = {
    id: StepId,
    name: Type.Optional(Type.String()),
    if: Type.Optional(Condition),
    timeout: Type.Optional(Duration),
    retry: Type.Optional(Retry),
    onError: Type.Optional(
      Type.Union([Type.String({ enum: ['fail', 'continue'] }), Type.Array(nested, { minItems: 1 })], {
        description: 'fail (default), continue, or rescue steps.',
      }),
    ),
  };

  const UsesStep = closed({
    ...common,
    uses,
    with: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Expr])),
    devices: Type.Optional(DevicePolicy),
    wait: Type.Optional(WaitCompletion),
    confirm: Type.Optional(Confirm),
    items: Type.Optional(ListingItems),
    limits: Type.Optional(
      closed({
        maxDevices: Type.Optional(Type.Integer({ minimum: 0 })),
        maxPercentOfFleet: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
      }),
    ),
  });

  const ForEachStep = closed({
    ...common,
    forEach: closed({
      items: Type.Union([Expr, Type.Array(Type.Unknown())]),
      batchSize: Type.Optional(
        Type.Integer({ minimum: 1, description: '`item` is a batch of this many elements.' }),
      ),
      concurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Default 1.' })),
      toleratedFailurePercent: Type.Optional(
        Type.Number({ minimum: 0, maximum: 100, description: 'Default 0.' }),
      ),
      steps: Type.Array(nested, { minItems: 1 }),
    }),
  });

  const ParallelStep = closed({ ...common, parallel: Type.Array(nested, { minItems: 2 }) });
  const WaitStep = closed({ ...common, wait: Type.Union([Duration, WaitEvent]) });
  const SetStep = closed({
    ...common,
    set: Type.Record(Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$' }), Type.Unknown(), {
      minProperties: 1,
      'x-message': 'set is empty: give at least one variable, as `name: value`',
    }),
  });
  const FailStep = closed({
    ...common,
    fail: Type.Union([Type.String({ minLength: 1 }), closed({ message: Type.String({ minLength: 1 }) })]),
  });
  return {
    uses: UsesStep,
    forEach: ForEachStep,
    parallel: ParallelStep,
    set: SetStep,
    fail: FailStep,
    wait: WaitStep,
  };
}

const ActionName = Type.String({
  enum: [...ACTIONS, ...ENGINE_ACTION_NAMES],
  description: 'An action: area.verb.',
});
const AnyStep = Type.Object({}, { additionalProperties: true });
/** Step schemas for the loader: nested steps and action names are checked by the loader itself. */
export const STEP_SCHEMAS = stepKinds(AnyStep, Type.String({ minLength: 1 }));
const FULL_STEPS = stepKinds(Type.Ref('Step'), ActionName);

export { STEP_KINDS } from './step-kinds.js';

const Callback = closed({ service: Type.String({ enum: [...CALLBACK_SERVICES] }), if: Type.Optional(Expr) });
const Schedule = closed({
  cron: Type.String({
    minLength: 1,
    description:
      'Five fields (minute hour day month weekday), or six with seconds first; L, W and # in the day fields; or a nickname (@daily, @hourly, @weekly, @monthly, @yearly).',
  }),
  timezone: Type.Optional(
    Type.String({ description: 'An IANA time zone, e.g. America/New_York. Default UTC.' }),
  ),
  missed: Type.Optional(
    Type.String({ enum: ['latest', 'all', 'none'], description: 'Runs missed while down: default latest.' }),
  ),
  overlap: Type.Optional(
    Type.Boolean({ description: 'Allow a run to start while the previous one runs. Default false.' }),
  ),
});
const INPUT_TYPES = ['string', 'integer', 'number', 'boolean', 'array', 'object'];
const Pattern = Type.String({
  description:
    'An RE2 regular expression (as `matches()` takes) the text must match somewhere: anchor it with ^ and $ for the whole text.',
});
const Minimum = Type.Number({ description: 'The least value taken.' });
const Maximum = Type.Number({ description: 'The greatest value taken.' });
const MinLength = Type.Integer({ minimum: 0, description: 'The fewest characters taken.' });
const MaxLength = Type.Integer({ minimum: 0, description: 'The most characters taken.' });
const InputDecl = closed({
  type: Type.String({ enum: INPUT_TYPES }),
  description: Type.Optional(Type.String()),
  default: Type.Optional(Type.Unknown()),
  required: Type.Optional(Type.Boolean()),
  enum: Type.Optional(Type.Array(Type.Unknown(), { minItems: 1 })),
  pattern: Type.Optional(Pattern),
  minLength: Type.Optional(MinLength),
  maxLength: Type.Optional(MaxLength),
  minimum: Type.Optional(Minimum),
  maximum: Type.Optional(Maximum),
  items: Type.Optional(
    closed(
      {
        type: Type.String({ enum: INPUT_TYPES }),
        pattern: Type.Optional(Pattern),
        minLength: Type.Optional(MinLength),
        maxLength: Type.Optional(MaxLength),
        enum: Type.Optional(Type.Array(Type.Unknown(), { minItems: 1 })),
        minimum: Type.Optional(Minimum),
        maximum: Type.Optional(Maximum),
      },
      { description: "An array input: its elements' type, and what each must keep." },
    ),
  ),
  minItems: Type.Optional(Type.Integer({ minimum: 0, description: 'The fewest elements taken.' })),
  maxItems: Type.Optional(Type.Integer({ minimum: 0, description: 'The most elements taken.' })),
  uniqueItems: Type.Optional(Type.Boolean({ description: 'No element given twice.' })),
});

/** The top level; `step` is the schema of one step (see stepKinds). */
function playbookObject(step: Type.TSchema) {
  return closed({
    $schema: Type.Optional(Type.String()),
    version: Type.Literal(1),
    name: Type.String({
      pattern: '^[a-z0-9][a-z0-9._-]*$',
      maxLength: MAX_PLAYBOOK_NAME,
      description: 'lower-case letters, digits, ., _ and -',
    }),
    description: Type.Optional(Type.String()),
    on: closed(
      {
        callback: Type.Optional(Type.Union([Callback, Type.Array(Callback, { minItems: 1 })])),
        schedule: Type.Optional(Type.Union([Schedule, Type.Array(Schedule, { minItems: 1 })])),
        manual: Type.Optional(Type.Boolean()),
      },
      {
        minProperties: 1,
        'x-required':
          "it names what starts the playbook's runs: `on: { manual: true }` for runs by hand (`fleetbook run`, the console), a `schedule`, a `callback`, or several",
      },
    ),
    inputs: Type.Optional(Type.Record(Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$' }), InputDecl)),
    vars: Type.Optional(Type.Record(Type.String({ pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$' }), Type.Unknown())),
    concurrency: Type.Optional(
      closed({
        key: Type.Optional(Type.String()),
        limit: Type.Optional(Type.Integer({ minimum: 1, description: 'Default 1.' })),
        onConflict: Type.Optional(
          Type.String({ enum: ['queue', 'skip', 'cancel'], description: 'Default queue.' }),
        ),
      }),
    ),
    limits: Type.Optional(
      closed({
        maxDevices: Type.Optional(Type.Integer({ minimum: 0 })),
        maxPercentOfFleet: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
      }),
    ),
    steps: Type.Array(step, { minItems: 1 }),
    finally: Type.Optional(Type.Array(step, { minItems: 1 })),
  });
}

/** The top level for the loader, which checks each step by its kind. */
export const PLAYBOOK_TOP = playbookObject(AnyStep);

const Defs = Type.Cyclic(
  {
    Step: Type.Union([
      FULL_STEPS.uses,
      FULL_STEPS.forEach,
      FULL_STEPS.parallel,
      FULL_STEPS.set,
      FULL_STEPS.fail,
      FULL_STEPS.wait,
    ]),
    Playbook: playbookObject(Type.Ref('Step')),
  },
  'Playbook',
);
/**
 * The TypeScript types, from the same schemas as the loader uses. TypeBox's recursive static types degrade to
 * `unknown` under heavy instantiation, so nested steps are typed here instead of through the cyclic schema.
 */
type Kinds = typeof STEP_SCHEMAS;
type Nested<T> =
  T extends Record<string, unknown>
    ? {
        [K in keyof T]: K extends 'steps' | 'parallel' | 'onError'
          ? T[K] extends unknown[]
            ? Step[]
            : T[K] | Step[]
          : Nested<T[K]>;
      }
    : T;
export type Step = { [K in keyof Kinds]: Nested<Type.Static<Kinds[K]>> }[keyof Kinds];
export type Playbook = Omit<Type.Static<typeof PLAYBOOK_TOP>, 'steps' | 'finally'> & {
  steps: Step[];
  finally?: Step[];
};

const VALUE_KEYWORDS = [
  'type',
  'enum',
  'const',
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
];

/** An action schema with an expression allowed in place of any value. */
export function allowExpressions(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(allowExpressions);
  if (!schema || typeof schema !== 'object') return schema;
  const s = { ...(schema as Record<string, unknown>) };
  for (const k of ['properties', 'patternProperties', '$defs'] as const) {
    if (s[k])
      s[k] = Object.fromEntries(Object.entries(s[k] as object).map(([n, v]) => [n, allowExpressions(v)]));
  }
  for (const k of ['items', 'additionalProperties', 'then', 'else'] as const) {
    if (s[k] && typeof s[k] === 'object') s[k] = allowExpressions(s[k]);
  }
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) if (s[k]) s[k] = allowExpressions(s[k]);
  // A tag given as an expression matches every branch: the branches, disjoint for values, become an anyOf.
  if (s.discriminator) {
    delete s.discriminator;
    s.anyOf = s.oneOf;
    delete s.oneOf;
  }
  // A value's rule: a type, a set of values, or a constraint of one (a device id's format in a branch of its
  // kind is a bare `pattern`).
  const isValue = VALUE_KEYWORDS.some((k) => k in s);
  return isValue ? { anyOf: [s, EXPRESSION] } : s;
}

/**
 * The schema a step's `with` is checked against: what a step may give, where that is narrower than the action's
 * input (exactly the devices a device action acts on), else the request as sent, where that differs (batches).
 */
export function withSchemaFor(action: string): object | undefined {
  if (Object.hasOwn(CATALOG, action)) {
    const op = CATALOG[action as keyof typeof CATALOG] as Operation;
    return op.stepInput ?? op.request ?? op.input;
  }
  if (Object.hasOwn(ENGINE_ACTIONS, action))
    return ENGINE_ACTIONS[action as keyof typeof ENGINE_ACTIONS].input;
  return undefined;
}

/** The whole playbook schema, with one `if uses = X then with: X's schema` rule per action. */
export function playbookSchema(): Record<string, unknown> {
  const defs = JSON.parse(JSON.stringify(Defs.$defs)) as Record<string, Record<string, unknown>>;
  const uses = (defs.Step?.anyOf as Record<string, unknown>[])[0] as Record<string, unknown>;
  const rules: object[] = [];
  for (const action of [...ACTIONS, ...ENGINE_ACTION_NAMES]) {
    const schema = withSchemaFor(action);
    if (!schema) continue;
    const name = `with:${action}`;
    defs[name] = allowExpressions(JSON.parse(JSON.stringify(schema))) as Record<string, unknown>;
    delete defs[name].$id;
    rules.push({
      if: { properties: { uses: { const: action } }, required: ['uses'] },
      then: {
        properties: { with: { anyOf: [{ $ref: `#/$defs/${encodeURIComponent(name)}` }, EXPRESSION] } },
      },
    });
  }
  uses.allOf = rules;
  // TypeBox names definitions by $id; refer to them by JSON pointer so that the file stands alone.
  const fixed = pointerRefs(defs) as Record<string, unknown>;
  return {
    $schema: DIALECT,
    $id: 'https://fleetbook.dev/schemas/playbook.schema.json',
    title: 'fleetbook playbook',
    description: 'A fleetbook playbook: a trigger, typed inputs and the steps to run (docs/playbook.md).',
    $ref: '#/$defs/Playbook',
    $defs: fixed,
  };
}

function pointerRefs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(pointerRefs);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$id' && (v === 'Step' || v === 'Playbook')) continue;
    out[k] = k === '$ref' && (v === 'Step' || v === 'Playbook') ? `#/$defs/${v}` : pointerRefs(v);
  }
  return out;
}
