/**
 * What scripts/emit-rules.ts prepares at build time in dist/generated/: standalone ajv validators (so that no
 * schema is compiled at run time), the V8 code caches of the request validators, and `rules.json`, the playbook rules of `fleetbook validate`
 * (playbook/generated-rules.ts) with the list of validators.
 *
 * Absent (running from src/, or a build without the step) or stale (dist/ rebuilt since: the fingerprint of
 * the modules they were made from differs), they are not used, and callers compile their schemas as before.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/** The modules of dist/ the generated files are made from (with what they import). */
export const GENERATED_SOURCES = [
  'playbook/schema.js',
  'playbook/step-kinds.js',
  'api/catalog.js',
  'api/validate.js',
  'api/generated.js',
  'actions/engine.js',
  'actions/selectors.js',
  'api/device-errors.js',
  'playbook/generated-rules.js',
  'config.js',
  'testing/schema.js',
  'events/index.js',
] as const;

/** dist/generated/rules.json. */
export interface GeneratedFile {
  note: string;
  /** GENERATED_SOURCES and what they import, relative to dist/. */
  inputs: string[];
  fingerprint: string;
  actions: string[];
  /** The argument names of each action that has an argument schema. */
  argKeys: Record<string, string[]>;
  /**
   * Validator name → file in generated/: `top`, `step:<kind>` and `with:<action>` (playbook rules, expressions
   * allowed), `input:<action>` (the request schema of each catalog action, as the client checks it; the
   * argument schema of each engine action, as it checks its rendered arguments) and `config` (the
   * configuration, config.ts), `test-file` (a playbook test file, testing/load.ts) and `event:<service>` (the
   * event of each callback service, events/index.ts).
   */
  validators: Record<string, string>;
  /** Selectors known to be fine: `step[action]` and `device[action]` index `sets` ('' is no action). */
  selectors: { sets: string[][]; step: Record<string, number>; device: Record<string, number> };
  /** The actions whose steps may say `confirm:` (device-state actions). */
  confirms: string[];
  /** The actions whose steps may say `wait: { for: completion }` (location reports). */
  completions: string[];
  /** The actions a wait's `poll` may call. */
  polls: string[];
}

/** A standalone validator: true when valid; it never explains (the explaining instance of validate.ts does). */
export type Validate = (data: unknown) => boolean;

/** SHA-256 of the files' contents, in order. */
export function fingerprint(files: readonly string[]): string {
  const hash = createHash('sha256');
  for (const f of files) hash.update(readFileSync(f)).update('\0');
  return hash.digest('hex');
}

export interface Generated {
  file: GeneratedFile;
  /** The validator of that name, loaded on first use; undefined when there is none. */
  validator(name: string): Validate | undefined;
}

let cached: Generated | null | undefined;

/** The generated files, or undefined when there are none or they are stale. */
export function generated(): Generated | undefined {
  if (cached === undefined) cached = read() ?? null;
  return cached ?? undefined;
}

function read(): Generated | undefined {
  const dir = new URL('../generated/', import.meta.url);
  const dist = new URL('../', import.meta.url);
  let file: GeneratedFile;
  try {
    file = JSON.parse(readFileSync(new URL('rules.json', dir), 'utf8')) as GeneratedFile;
    if (fingerprint(file.inputs.map((f) => fileURLToPath(new URL(f, dist)))) !== file.fingerprint)
      return undefined;
  } catch {
    return undefined;
  }
  const loaded = new Map<string, Validate | undefined>();
  return {
    file,
    validator(name) {
      if (!loaded.has(name)) {
        const f = Object.hasOwn(file.validators, name) ? file.validators[name] : undefined;
        loaded.set(name, f === undefined ? undefined : loadValidator(fileURLToPath(new URL(f, dir))));
      }
      return loaded.get(name);
    },
  };
}

/**
 * The V8 code cache the build writes beside a generated validator (`<file>.v8`, for the request validators the
 * client runs): compiling devices.suspend's 60 KB check from source costs about 3.5 ms at its first call, from
 * the cache about 1 ms. A cache another Node or other V8 flags made is refused by V8, which then compiles the
 * source as without one.
 */
export const CODE_CACHE_SUFFIX = '.v8';

/** A generated validator (a CommonJS module), compiled with its code cache when there is one. */
function loadValidator(file: string): Validate {
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(file + CODE_CACHE_SUFFIX);
  } catch {
    // No cache for this one: compiled from source.
  }
  return compileValidator(file, cachedData).validate;
}

/**
 * Compiles and runs the CommonJS module of a generated validator as require() would, with `cachedData` when
 * given, and records it in require.cache as require() does; `script` makes the code cache
 * (scripts/emit-rules.ts, once the validator has run).
 */
export function compileValidator(file: string, cachedData?: Buffer): { validate: Validate; script: Script } {
  const script = new Script(Module.wrap(readFileSync(file, 'utf8')), {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  });
  const require = createRequire(file);
  const module = new Module(file);
  module.filename = file;
  (script.runInThisContext() as (...args: unknown[]) => void)(
    module.exports,
    require,
    module,
    file,
    dirname(file),
  );
  module.loaded = true;
  require.cache[file] = module;
  return { validate: module.exports as Validate, script };
}
