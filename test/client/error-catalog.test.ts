/**
 * The error catalog (src/errors.ts): every code is unique and documented, every FleetbookError subclass uses
 * a code of the catalog, and no code is used anywhere in src/ that the catalog does not list.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import * as errors from '../../src/errors.js';
import {
  AbortedError,
  ApiError,
  AuthError,
  ConfigError,
  EnvWithheldError,
  ERROR_CODES,
  ExpressionBudgetError,
  FleetbookError,
  InputError,
  LeaseLostError,
  LoginError,
  NetworkError,
  UnknownActionError,
} from '../../src/errors.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sourceFiles(p)));
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** One instance of each subclass, made as the code makes it. A new subclass must be added here. */
const INSTANCES: Record<string, () => FleetbookError> = {
  FleetbookError: () => new FleetbookError('FB_ABORTED', 'cancelled', 'permanent'),
  ApiError: () =>
    new ApiError({
      status: 500,
      apiCode: 'INTERNAL_ERROR',
      apiMessage: 'x',
      action: 'a.b',
      shape: 'errorCode',
    }),
  NetworkError: () => new NetworkError('a.b', 'ECONNRESET', true, 'reset'),
  AbortedError: () => new AbortedError('a.b', false),
  InputError: () => new InputError('a.b', [{ path: '/x', message: 'bad' }]),
  UnknownActionError: () => new UnknownActionError('a.c', ['a.b']),
  LoginError: () => new LoginError('refused'),
  AuthError: () => new AuthError('refused'),
  ConfigError: () => new ConfigError('missing'),
  LeaseLostError: () => new LeaseLostError('owner-1'),
  EnvWithheldError: () => new EnvWithheldError('DB_PASSWORD', 'it is named like a password'),
  ExpressionBudgetError: () => new ExpressionBudgetError('l.map(a, l.map(b, a + b))', 120_000, 100_000, 100),
};

describe('error catalog', () => {
  it('codes are unique in the source, stable in form, and each is documented by a sentence', async () => {
    const text = await readFile(join(SRC, 'errors.ts'), 'utf8');
    const block = /export const ERROR_CODES = \{([\s\S]*?)\n\} as const;/.exec(text)?.[1];
    expect(block, 'the ERROR_CODES literal').to.be.a('string');
    // Keys as written: a duplicate key would silently replace the first one at run time.
    const written = [...block!.matchAll(/^\s{2}(\w+):/gm)].map((m) => m[1]);
    expect(written.length, 'a key is written twice').to.equal(new Set(written).size);
    expect(written).to.deep.equal(Object.keys(ERROR_CODES));
    for (const [code, doc] of Object.entries(ERROR_CODES)) {
      expect(code).to.match(/^FB_[A-Z]+(_[A-Z]+)*$/);
      expect(doc, code).to.be.a('string');
      expect(doc.trim().length, `${code} is documented`).to.be.greaterThan(15);
      expect(doc.trim(), code).to.match(/[.)]$/);
    }
  });

  it('every FleetbookError subclass in src/errors.ts uses a code of the catalog, and a distinct one', () => {
    const classes = Object.entries(errors).filter(
      ([, v]) => typeof v === 'function' && (v === FleetbookError || v.prototype instanceof FleetbookError),
    );
    expect(classes.map(([n]) => n).sort()).to.deep.equal(Object.keys(INSTANCES).sort());
    const bySubclass = new Map<string, string>();
    for (const [name, make] of Object.entries(INSTANCES)) {
      const e = make();
      expect(e).to.be.instanceOf(FleetbookError);
      expect(e.name).to.equal(name);
      expect(Object.keys(ERROR_CODES), name).to.include(e.code);
      expect(e.retryClass).to.be.oneOf(['retryable', 'session', 'permanent']);
      expect(e.toJSON()).to.include({ code: name === 'ApiError' ? 'INTERNAL_ERROR' : e.code });
      if (name !== 'FleetbookError') bySubclass.set(name, e.code);
    }
    expect(new Set(bySubclass.values()).size, 'one code per subclass').to.equal(bySubclass.size);
  });

  it('every FB_ code used anywhere in src/ is in the catalog, and every catalog code is used', async () => {
    const used = new Map<string, string[]>();
    const ours = new RegExp(`class (\\w+) extends (${Object.keys(INSTANCES).join('|')})\\b`, 'g');
    for (const file of await sourceFiles(SRC)) {
      const text = await readFile(file, 'utf8');
      for (const m of text.matchAll(/['"`](FB_[A-Z_]+)['"`]/g)) {
        used.set(m[1]!, [...(used.get(m[1]!) ?? []), file]);
      }
      // A subclass declared outside src/errors.ts names its code where it is declared.
      if (!file.endsWith(join('src', 'errors.ts')))
        for (const m of text.matchAll(ours))
          expect(text, `${m[1]} in ${file} passes a literal FB_ code`).to.match(/['"`]FB_[A-Z_]+['"`]/);
    }
    for (const [code, files] of used)
      expect(Object.keys(ERROR_CODES), `${code} in ${files.join(', ')}`).to.include(code);
    for (const code of Object.keys(ERROR_CODES)) expect(used.has(code), `${code} is used`).to.equal(true);
  });
});
