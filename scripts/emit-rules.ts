/**
 * Writes dist/generated/: what the TypeBox schemas and the action catalog give, prepared at build time
 * (`npm run build` runs this after tsc), so that neither validating a playbook nor checking a request compiles
 * a schema at run time (src/api/generated.ts reads it):
 *
 * - one standalone ajv validator per schema the loader checks (the top level, each step kind, each action's
 *   arguments with expressions allowed), per catalog action's request schema (what the client checks
 *   before every call), of the configuration, of a playbook test file and of each callback service's event, as CommonJS, compiled exactly as api/validate.ts's fast
 *   instance; beside each request validator, its V8 code cache (api/generated.ts);
 * - the action names, each action's argument names, and which retry selectors each action accepts (computed
 *   by actions/selectors.ts itself, over the selectors people write; others take the full path);
 * - a fingerprint of the compiled modules all this comes from: when dist/ is rebuilt without this step, the
 *   fingerprint no longer matches and `fleetbook validate` ignores the generated files.
 *
 * It reads the compiled modules in dist/, so that the fingerprint is of exactly what it ran.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import standaloneModule from 'ajv/dist/standalone/index.js';
import type * as Schema from '../src/playbook/schema.js';
import type * as StepKinds from '../src/playbook/step-kinds.js';
import type * as Catalog from '../src/api/catalog.js';
import type * as Engine from '../src/actions/engine.js';
import type * as Selectors from '../src/actions/selectors.js';
import type * as DeviceErrors from '../src/api/device-errors.js';
import type * as Validate from '../src/api/validate.js';
import type * as Generated from '../src/api/generated.js';
import type * as Config from '../src/config.js';
import type * as TestSchema from '../src/testing/schema.js';
import type * as Events from '../src/events/index.js';

const standaloneCode = standaloneModule.default;
const DIST_URL = new URL('../dist/', import.meta.url);
const DIST = fileURLToPath(DIST_URL);
const OUT = join(DIST, 'generated');

const load = <T>(path: string) => import(new URL(path, DIST_URL).href) as Promise<T>;
const { PLAYBOOK_TOP, STEP_SCHEMAS, withSchemaFor, allowExpressions } =
  await load<typeof Schema>('playbook/schema.js');
const { STEP_KINDS } = await load<typeof StepKinds>('playbook/step-kinds.js');
const { ACTIONS, CATALOG } = await load<typeof Catalog>('api/catalog.js');
const { ENGINE_ACTION_NAMES, ENGINE_ACTIONS } = await load<typeof Engine>('actions/engine.js');
const { stepSelectorProblem, deviceSelectorProblem, confirmProblem, completionProblem, pollProblem } =
  await load<typeof Selectors>('actions/selectors.js');
const { DEVICE_ERROR_TYPES, DEVICE_STATE_ERROR_TYPES } =
  await load<typeof DeviceErrors>('api/device-errors.js');
const { createAjv, inputValidatorName } = await load<typeof Validate>('api/validate.js');
const { GENERATED_SOURCES, fingerprint, compileValidator, CODE_CACHE_SUFFIX } =
  await load<typeof Generated>('api/generated.js');
const { CONFIG_SCHEMA } = await load<typeof Config>('config.js');
const { testFileSchema } = await load<typeof TestSchema>('testing/schema.js');
const { SCHEMAS: EVENT_SCHEMAS, eventValidatorName } = await load<typeof Events>('events/index.js');

// ── validators ──────────────────────────────────────────────────────────────────────────────────
const ajv = createAjv(false, { source: true });
const validators: Record<string, string> = {};
const files = new Map<string, string>();
function emit(name: string, schema: object): void {
  const file = `${name.replace(/[^A-Za-z0-9._-]/g, '_')}.cjs`;
  if (files.has(file)) throw new Error(`two validators would be written to ${file}`);
  files.set(file, standaloneCode(ajv, ajv.compile(schema)));
  validators[name] = file;
}
emit('top', PLAYBOOK_TOP);
emit('config', CONFIG_SCHEMA);
emit('test-file', testFileSchema());
for (const [service, schema] of Object.entries(EVENT_SCHEMAS)) emit(eventValidatorName(service), schema);
for (const kind of STEP_KINDS) emit(`step:${kind}`, STEP_SCHEMAS[kind]);
const actions = [...ACTIONS, ...ENGINE_ACTION_NAMES];
const argKeys: Record<string, string[]> = {};
for (const action of actions) {
  const schema = withSchemaFor(action);
  if (!schema) continue;
  // As PLAYBOOK_RULES.args and argKeys in load.ts.
  emit(`with:${action}`, allowExpressions(JSON.parse(JSON.stringify(schema))) as object);
  argKeys[action] = Object.keys((schema as { properties?: object }).properties ?? {});
}
// As the client's check of each request (api/client.ts, prepare).
for (const action of ACTIONS) emit(inputValidatorName(action), CATALOG[action].input);
// As the check of an engine action's rendered arguments (actions/executors.ts, runEngineAction).
for (const action of ENGINE_ACTION_NAMES) emit(inputValidatorName(action), ENGINE_ACTIONS[action].input);

// ── retry selectors ─────────────────────────────────────────────────────────────────────────────
const HTTP = ['4xx', '5xx'];
for (let code = 400; code < 600; code++) HTTP.push(String(code));
const API_CODES = [
  'INVALID_PARAMETER',
  'PARAMETER_ERROR',
  'INVALID_ACCESS',
  'INTERNAL_ERROR',
  'CACHE_UNAVAILABLE',
  'NOT_FOUND',
  'UNAUTHORIZED',
  'TOO_MANY_REQUESTS',
];
const STEP_SELECTORS = [
  ...['network', 'timeout', 'retryable', 'session', 'permanent'],
  ...HTTP.map((h) => `http.${h}`),
  ...API_CODES,
  ...DEVICE_ERROR_TYPES,
];
const sets: string[][] = [];
const setIndex = (ok: string[]) => {
  const key = JSON.stringify(ok);
  const i = sets.findIndex((s) => JSON.stringify(s) === key);
  return i === -1 ? sets.push(ok) - 1 : i;
};
const step: Record<string, number> = {};
const device: Record<string, number> = {};
// '' stands for a step without `uses`.
for (const action of ['', ...actions]) {
  const a = action || undefined;
  step[action] = setIndex(STEP_SELECTORS.filter((s) => stepSelectorProblem(a, s) === undefined));
  device[action] = setIndex(
    [...DEVICE_ERROR_TYPES, ...DEVICE_STATE_ERROR_TYPES].filter(
      (t) => deviceSelectorProblem(a, t) === undefined,
    ),
  );
}

// ── the fingerprint of the modules it all comes from ────────────────────────────────────────────
const inputs = await moduleGraph(GENERATED_SOURCES);
const rules: Generated.GeneratedFile = {
  note: 'Generated by scripts/emit-rules.ts at build time; not checked in.',
  inputs,
  fingerprint: fingerprint(inputs.map((f) => join(DIST, f))),
  actions,
  argKeys,
  validators,
  selectors: { sets, step, device },
  confirms: actions.filter((a) => confirmProblem(a) === undefined),
  completions: actions.filter((a) => completionProblem(a) === undefined),
  polls: actions.filter((a) => pollProblem(a) === undefined),
};

await rm(OUT, { recursive: true, force: true });
await mkdir(OUT, { recursive: true });
for (const [file, code] of files) await writeFile(join(OUT, file), code);
// The request validators' V8 code caches, made after a first call has compiled each validator's function.
for (const action of ACTIONS) {
  const file = join(OUT, validators[inputValidatorName(action)] as string);
  const { validate, script } = compileValidator(file);
  validate({});
  await writeFile(file + CODE_CACHE_SUFFIX, script.createCachedData());
}
// Which Node built this: scripts/build-if-changed.mjs builds again under another (the code caches are its V8's).
await writeFile(
  join(OUT, 'node.json'),
  `${JSON.stringify({ node: process.version, v8: process.versions.v8, arch: process.arch })}\n`,
);
await writeFile(join(OUT, 'rules.json'), `${JSON.stringify(rules)}\n`);
console.log(`wrote ${files.size} validators and rules.json to ${relative(process.cwd(), OUT)}/`);

/** The modules of dist/ that `roots` import, directly or not, as paths relative to dist/, sorted. */
async function moduleGraph(roots: readonly string[]): Promise<string[]> {
  const seen = new Set<string>();
  const todo = [...roots];
  while (todo.length) {
    const file = todo.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const code = await readFile(join(DIST, file), 'utf8');
    for (const m of code.matchAll(/^(?:import|export)\s[^;]*?from\s*'(\.{1,2}\/[^']+)'/gm)) {
      todo.push(relative(DIST, join(DIST, dirname(file), m[1] as string)));
    }
    // And the modules loaded on first use (the schemas): a validator made from them is stale when they change.
    for (const m of code.matchAll(/\bonFirstUse\(import\.meta\.url,\s*'(\.{1,2}\/[^']+)'\)/g)) {
      todo.push(relative(DIST, join(DIST, dirname(file), m[1] as string)));
    }
  }
  return [...seen].sort();
}
