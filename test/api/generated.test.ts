/**
 * The files the build generates in dist/generated/ (scripts/emit-rules.ts): a request validator for every
 * catalog action that says what the schema compiled at run time says, used by the built client; and a
 * fingerprint that makes them unused when dist/ has changed since. `npm test` builds before mocha runs.
 */
import { cpSync, appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { ACTIONS, CATALOG } from '../../src/api/catalog.js';
import { createAjv, inputValidatorName } from '../../src/api/validate.js';
import { CODE_CACHE_SUFFIX, compileValidator, type Generated } from '../../src/api/generated.js';
import { CASES } from '../helpers/action-cases.js';
import { tempDir } from '../helpers/temp.js';

const DIST = join(import.meta.dirname, '..', '..', 'dist');

/** What dist/api/generated.js of that dist/ finds. */
async function generatedIn(dist: string) {
  const m = (await import(pathToFileURL(join(dist, 'api', 'generated.js')).href)) as {
    generated: () => Generated | undefined;
  };
  return m.generated();
}

/**
 * Inputs a validator must judge as the compiled schema does: a valid one, and ways to spoil it, at the top and
 * inside the first item of each list of objects (a device with a bad id or kind, say).
 */
function variants(valid: unknown, depth = 0): unknown[] {
  if (!valid || typeof valid !== 'object' || Array.isArray(valid)) return [valid];
  const v = valid as Record<string, unknown>;
  const out: unknown[] = [v, {}, null, 'text', { ...v, unknownField: 1 }];
  for (const [key, value] of Object.entries(v)) {
    const { [key]: _dropped, ...rest } = v;
    out.push(rest, { ...v, [key]: 12345 }, { ...v, [key]: [] }, { ...v, [key]: 'x' });
    if (depth < 3 && Array.isArray(value) && value.length)
      for (const first of variants(value[0], depth + 1))
        out.push({ ...v, [key]: [first, ...value.slice(1)] });
    else if (depth < 3 && value && typeof value === 'object')
      for (const inner of variants(value, depth + 1)) out.push({ ...v, [key]: inner });
  }
  return out;
}

describe('generated request validators', () => {
  before(function () {
    if (!existsSync(join(DIST, 'generated', 'rules.json')))
      throw new Error('dist/generated/ is missing: run `npm run build` (npm test does)');
  });

  it('exist for every action and agree with the schema compiled at run time', async () => {
    const g = await generatedIn(DIST);
    expect(g, 'the generated files are current').to.not.equal(undefined);
    const compiled = createAjv(false);
    for (const action of ACTIONS) {
      const v = g!.validator(inputValidatorName(action));
      expect(v, action).to.be.a('function');
      const check = compiled.compile(CATALOG[action].input);
      for (const input of variants(CASES[action].input as Record<string, unknown>)) {
        expect(v!(input), `${action} ${JSON.stringify(input)}`).to.equal(check(input));
      }
      expect(v!(CASES[action].input), action).to.equal(true);
    }
  });

  it('come with a V8 code cache for each request validator, which this Node accepts', async () => {
    const g = await generatedIn(DIST);
    for (const action of ACTIONS) {
      const file = join(DIST, 'generated', g!.file.validators[inputValidatorName(action)] as string);
      const { validate, script } = compileValidator(file, readFileSync(file + CODE_CACHE_SUFFIX));
      expect(script.cachedDataRejected, action).to.equal(false);
      expect(validate(CASES[action].input), action).to.equal(true);
    }
  });

  it('are not used once a module they were made from has changed', async () => {
    const stale = join(tempDir('fleetbook-dist-'), 'dist');
    cpSync(DIST, stale, { recursive: true });
    expect(await generatedIn(stale), 'an unchanged copy is current').to.not.equal(undefined);
    const changed = join(tempDir('fleetbook-dist-'), 'dist');
    cpSync(DIST, changed, { recursive: true });
    appendFileSync(join(changed, 'api', 'catalog.js'), '\n// changed\n');
    expect(await generatedIn(changed)).to.equal(undefined);
  });
});
