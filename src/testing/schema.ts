/**
 * The language of playbook tests (`NAME.test.yaml` beside `NAME.yaml`) as JSON Schema 2020-12:
 * `schemas/playbook-test.schema.json`, and the check of every test file `fleetbook test` loads.
 */
import { CATALOG } from '../api/catalog.js';
import { DIALECT } from '../api/schema-files.js';
import { DEVICE_ERRORS } from '../api/device-errors.js';
import { STATES } from '../emulator/devices.js';
import { DEVICE_OUTCOMES, STEP_STATUSES } from '../store/store.js';
import {
  MAX_DEVICES,
  MAX_NEVER_FINISH_DEVICES,
  MAX_REQUESTS_PER_SECOND,
  MAX_SIMULATED_SECONDS,
  RANGES,
} from '../emulator/limits.js';
import { MAX_TIME_SCALE } from '../emulator/sim-clock.js';
import { MAX_DURATION } from '../playbook/duration.js';
import { DURATION_PATTERN, DURATION_TEXT } from '../playbook/duration.js';

type Schema = Record<string, unknown>;

const closed = (properties: Record<string, Schema>, extra: Schema = {}): Schema => ({
  type: 'object',
  properties,
  additionalProperties: false,
  ...extra,
});
const text = (description: string): Schema => ({ type: 'string', minLength: 1, description });
const count = (description: string): Schema => ({ type: 'integer', minimum: 0, description });
const share = (description: string): Schema => ({ type: 'number', minimum: 0, maximum: 1, description });
const duration = (description: string): Schema => ({
  type: 'string',
  pattern: DURATION_PATTERN,
  'x-rule': 'duration',
  description: `${description} ${DURATION_TEXT}`,
});
const countsBy = (description: string): Schema => ({
  type: 'object',
  additionalProperties: { type: 'integer', minimum: 0 },
  description,
});
/**
 * An expectation that gives nothing checks nothing, however deep it sits (`steps: { list: {} }`): a case that
 * cannot fail, refused like a misspelt key.
 */
const checksSomething = (schema: Schema, what: string, give: string): Schema => ({
  ...schema,
  allOf: [{ minProperties: 1, 'x-message': `${what} checks nothing: give ${give}` }],
});
const oneOf = (schema: Schema) => `at least one of ${Object.keys(schema.properties as Schema).join(', ')}`;

/** Counts by API action: a name that is none (`devices.suspendd`) is refused, not counted as never called. */
const byAction = (description: string): Schema => ({
  ...countsBy(description),
  propertyNames: { enum: Object.keys(CATALOG) },
  'x-message': 'is not an API action (`fleetbook actions` lists them)',
});

const COUNTS = closed(
  {
    total: count('Devices in all.'),
    accepted: count('Accepted by the service, outcome still to come.'),
    succeeded: count('Confirmed done.'),
    failed: count('Confirmed not done.'),
    skipped: count('Not sent: a condition, a limit, a dry run, or an ignored error type.'),
    unconfirmed: count('Accepted, never confirmed.'),
    byError: countsBy(
      'Devices by error type (a 7.3 type, an API error code): exactly these types, with these counts.',
    ),
  },
  { description: 'Device counts by outcome; only the members given are compared.' },
);
const DEVICE_COUNTS = checksSomething(COUNTS, 'devices', oneOf(COUNTS));

/** The longest wait of simulated time a fault sets, as a duration. */
const YEAR = `${MAX_SIMULATED_SECONDS / 86_400}d`;

/**
 * The world and the faults, as the embedded emulator takes them: the types here; the emulator's limits (limits.ts)
 * are checked when a test file loads (world.ts settingProblems), each at its place and by the test file's name.
 */
export const WORLD = closed(
  {
    seed: { type: ['integer', 'string'], description: 'Seed of the world: the same seed, the same devices.' },
    accounts: {
      type: 'integer',
      minimum: 1,
      description: `Accounts of the world, ${RANGES.accounts[0]} to ${RANGES.accounts[1]}.`,
    },
    devicesPerAccount: count(`Devices of each account; at most ${MAX_DEVICES} devices in all.`),
    timeScale: {
      type: 'number',
      minimum: 0,
      description: `Simulated seconds per real second, 0 to ${MAX_TIME_SCALE} (default 60, as the embedded emulator of \`fleetbook run\`).`,
    },
  },
  { description: 'The emulator world: the default world is seed 1, 3 accounts of 50 devices.' },
);

export const FAULTS = closed(
  {
    serverErrors: share('Share of API requests answered 500 before they act.'),
    connectionResets: share('Share of API requests whose connection is reset after they acted.'),
    latency: duration(`Delay before every API answer, at most ${MAX_DURATION}.`),
    rateLimit: count(
      `Requests per second the service takes, at most ${MAX_REQUESTS_PER_SECOND}; above it, 429 with Retry-After. 0: no limit.`,
    ),
    sessionExpiry: duration(
      `Idle time, in simulated time, after which a session expires (default 20m), above zero and at most ${YEAR}.`,
    ),
    deviceErrors: {
      type: 'object',
      additionalProperties: share('Share of the devices.'),
      propertyNames: { enum: Object.keys(DEVICE_ERRORS) },
      'x-message': 'is not a per-device error type of spec section 7.3',
      description:
        'Per-device errors of location results, by 7.3 type: `{ ABSENT SUBSCRIBER: 0.1 }`; the rates add up to 1 at most.',
    },
    carrierDelay: duration(
      `Simulated time the carrier takes to carry out a device-state request or an SMS (default 0), at most ${YEAR}.`,
    ),
    neverFinish: share('Share of the devices of device-state requests the carrier never finishes.'),
    neverFinishDevices: {
      type: 'array',
      items: { type: 'string', minLength: 1 },
      maxItems: MAX_NEVER_FINISH_DEVICES,
      description: 'Devices, by any identifier, that the carrier never finishes.',
    },
    droppedCallbacks: share('Share of per-device CarrierService callbacks never sent.'),
  },
  { description: 'Faults the emulator injects; what is left out does not happen.' },
);

const MATCH = {
  description:
    'Compared member by member: an object matches one that has at least its members; a string written /like this/ is a regular expression.',
};

const MATCHED = 'equal, or a string written /like this/ matching it';

/** One device's result, as `steps.<id>.items` gives it: only the members given are compared. */
const ITEM = closed(
  {
    id: text(`The device's identifier, as the step named it; ${MATCHED}.`),
    kind: text(`The kind of the identifier, in lower case (\`imei\`); ${MATCHED}.`),
    outcome: {
      enum: [...DEVICE_OUTCOMES],
      description: "The device's outcome in the step (a dry run's planned devices are `skipped`).",
    },
    error: text(
      `Its error type: a 7.3 type, an API error code, fleetbook's own (\`STATE NOT CHANGED\`, \`DRY RUN\`); ${MATCHED}.`,
    ),
    errorClass: text(`The class of its error (\`permanent\`, \`transient\`...); ${MATCHED}.`),
    attempts: count('How many times it was sent.'),
    requestId: text(`The request it went in; ${MATCHED}.`),
    data: {
      ...MATCH,
      description: `What the step got of it (a location report's fix). ${MATCH.description}`,
    },
  },
  { description: "One device's item; only the members given are compared." },
);

const ITEMS: Schema = {
  type: ['array', 'object'],
  items: ITEM,
  additionalProperties: ITEM,
  allOf: [
    {
      minProperties: 1,
      'x-message':
        'items checks nothing: give a device and what its item must have, or the list of the items',
    },
  ],
  description:
    "The step's items (`steps.<id>.items`): each device's result in a step that acts on devices, each device found by a listing or ledger.query. By device id (`'350260700638410': { outcome: failed, error: STATE NOT CHANGED }`), each device's item having at least the members given; or the whole list, item by item, in the order of the device ids (a listing's in its order). In a dry run, the devices a planned step would have acted on, `skipped` with `DRY RUN`.",
};

const STEP = closed(
  {
    status: {
      // A case's run has ended: none of its steps is still running.
      enum: STEP_STATUSES.filter((s) => s !== 'running' && s !== 'pending'),
      description:
        "The step's status, as the run summary gives it: `planned` in a dry run, `unreached` when the run never got to it.",
    },
    error: text("Text the step's error contains (or /a regular expression/)."),
    devices: DEVICE_COUNTS,
    outcomes: checksSomething(
      {
        type: 'object',
        additionalProperties: { enum: ['accepted', 'succeeded', 'failed', 'skipped', 'unconfirmed'] },
        description: 'The outcome of each device named (by the identifier the ledger keeps, e.g. the IMEI).',
      },
      'outcomes',
      'a device and its outcome',
    ),
    calls: count('API requests the step sent: one a page, one a batch of a report, a retry not counted.'),
    items: ITEMS,
    output: {
      description: `What the step gave (\`steps.<id>.output\`), matched member by member: an object matches one that has at least its members, a list matches item by item, a string written /like this/ is a regular expression. A step inside a forEach: the list of the outputs of the iterations it succeeded in, in the order of the items.`,
    },
    rows: count('A report.write step: rows written.'),
    columns: {
      type: 'array',
      items: { type: 'string' },
      description: 'A report.write step: the header row.',
    },
    contains: {
      type: 'array',
      items: { type: 'object', ...MATCH },
      description: 'A report.write step: rows (by column) that the report has, each matched by one row.',
    },
  },
  { description: 'What one step did (steps inside forEach are counted in the forEach).' },
);
const STEP_EXPECT = checksSomething(STEP, 'the step', oneOf(STEP));

const WEBHOOK = closed({
  requests: count('Requests the receiver got.'),
  body: { type: 'object', ...MATCH, description: 'A request whose JSON body matches this.' },
});

const RUN = closed(
  {
    status: {
      enum: ['succeeded', 'failed', 'cancelled', 'not-started'],
      description: "The run's status; `not-started`: the event starts no run (on.callback.if is false).",
    },
    error: text("Text the run's error (or its refusal) contains, or /a regular expression/."),
    devices: DEVICE_COUNTS,
    steps: checksSomething(
      { type: 'object', additionalProperties: STEP_EXPECT, description: 'By step id.' },
      'steps',
      'a step id and what the step must do',
    ),
    calls: checksSomething(
      byAction('Requests the emulator received, by action (`devices.suspend: 1`); only those named.'),
      'calls',
      'an action and its number of requests',
    ),
    deviceCalls: checksSomething(
      {
        type: 'object',
        additionalProperties: checksSomething(
          byAction('By action.'),
          'the device',
          'an action and its number of changes',
        ),
        description: 'Changes the emulator applied to each device named (any identifier), by action.',
      },
      'deviceCalls',
      'a device and its changes by action',
    ),
    deviceStates: checksSomething(
      {
        type: 'object',
        additionalProperties: { enum: [...STATES] },
        description: `The state of each device named (any identifier) after the run: ${STATES.join(', ')}.`,
      },
      'deviceStates',
      'a device and its state',
    ),
    webhooks: checksSomething(
      {
        type: 'object',
        additionalProperties: checksSomething(WEBHOOK, 'the receiver', oneOf(WEBHOOK)),
        description: 'By the name of a receiver of `webhooks`.',
      },
      'webhooks',
      'a receiver and what it must have got',
    ),
  },
  { description: 'What the run must do; only what is given is checked, and at least one thing is.' },
);
const EXPECT = checksSomething(RUN, 'expect', oneOf(RUN));

/** A date and time with its offset (`Z` or `±hh:mm`): a time with none would be read in the machine's zone. */
export const AT_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,3})?)?(Z|[+-]\\d{2}:\\d{2})$';

/** The run a fire of the playbook's `on.schedule` starts, as the daemon's scheduler makes it. */
const SCHEDULE: Schema = {
  anyOf: [
    { const: true },
    closed(
      {
        at: {
          type: 'string',
          pattern: AT_PATTERN,
          description:
            'A date and time with its offset (2026-11-30T02:00:00-05:00, 2026-11-30T07:00:00Z): the fire that starts the run. The run (run.startedAt, run.date) and the emulator start at that time.',
        },
      },
      { required: ['at'] },
    ),
  ],
  description:
    "The run a fire of the playbook's on.schedule starts, with the inputs' defaults: `true` (its next fire), or `{ at: TIME }` (the fire at that time).",
};

/** A run made before the case's own, on its emulator and store: what a `ledger.query` of the case finds. */
const EARLIER_RUN = closed(
  {
    playbook: text('The playbook, relative to this file. Default: the playbook the cases run.'),
    event: {
      type: 'object',
      description: 'A callback event, as the service posts it: the run is the one the daemon would start.',
    },
    inputs: { type: 'object', description: 'The inputs of a manual run (the playbook needs on.manual).' },
    schedule: SCHEDULE,
    faults: {
      ...FAULTS,
      description:
        "Faults of this run only: its members replace the case's (the case's own run has the case's).",
    },
  },
  {
    description:
      "An earlier run: an event, inputs or a schedule (one of them; none, a manual run with the inputs' defaults). It must succeed.",
  },
);

const CASE = closed(
  {
    name: text('What the case shows; one line of output.'),
    before: {
      type: 'array',
      minItems: 1,
      items: EARLIER_RUN,
      description:
        "Runs made first, in order, on the case's emulator (its world, its faults) and store: the ledger that the case's run queries (ledger.query). Each must succeed, or the case fails.",
    },
    event: {
      type: 'object',
      description: 'A callback event, as the service posts it: the run is the one the daemon would start.',
    },
    inputs: { type: 'object', description: 'The inputs of a manual run (the playbook needs on.manual).' },
    schedule: SCHEDULE,
    world: WORLD,
    faults: FAULTS,
    secrets: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: '`${{ secrets.X }}` values.',
    },
    webhooks: {
      type: 'object',
      additionalProperties: closed({
        status: { type: 'integer', minimum: 200, maximum: 599, description: 'What it answers (200).' },
      }),
      description:
        'Receivers on loopback, by name: each is given to the playbook as the secret of that name (its URL), and records what it receives.',
    },
    dryRun: { type: 'boolean', description: 'Run with --dry-run.' },
    timeout: duration('How long the run may take (default 60s).'),
    expect: EXPECT,
  },
  {
    required: ['name', 'expect'],
    description: 'One run: an event, inputs or a schedule (one of them), and what it must do.',
  },
);

/** The whole test file schema. */
export function testFileSchema(): Schema {
  return {
    $schema: DIALECT,
    $id: 'https://fleetbook.dev/schemas/playbook-test.schema.json',
    title: 'fleetbook playbook test',
    description:
      'Cases that run a playbook on the embedded emulator and check what it did (docs/testing.md).',
    ...closed(
      {
        playbook: text('The playbook, relative to this file. Default: NAME.yaml beside NAME.test.yaml.'),
        world: WORLD,
        faults: FAULTS,
        cases: { type: 'array', minItems: 1, items: CASE },
      },
      { required: ['cases'] },
    ),
  };
}
