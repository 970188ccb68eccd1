/**
 * A module loaded when it is first asked for, not when its importer is: what only some paths need (the TypeBox
 * schemas and ajv's compiler, which explain invalid input; the YAML parser of the full playbook loader;
 * croner; winston) stays out of every other command's start-up.
 */
import { createRequire } from 'node:module';

/**
 * A getter of the module `specifier` (relative to `base`, an importer's `import.meta.url`), which require()s it
 * on first use. Node 20.19 and later load an ES module that way, as the same instance an import gives, provided
 * that no module of its graph awaits at top level (none here does).
 *
 * Under a TypeScript loader (src/, the tests), require() makes a CommonJS instance of one of our modules beside
 * any ES one: the modules of ours loaded this way hold schemas and constants only, so the two are alike. A
 * package with both builds gives its CommonJS one: load it through one getter only (as `croner`).
 */
export function onFirstUse<T>(base: string, specifier: string): () => T {
  const require = createRequire(base);
  let m: T | undefined;
  return () => (m ??= require(specifier) as T);
}
