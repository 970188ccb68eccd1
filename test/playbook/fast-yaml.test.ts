/**
 * The fast YAML reader (src/playbook/fast-yaml.ts) against the `yaml` library it stands in for: on every input
 * it either gives up (`undefined`) or returns exactly what `yaml` returns, and it never accepts a text that
 * `yaml` rejects. Inputs: every playbook of the repository, YAML that `yaml` itself writes in many styles from
 * generated data, and those texts mutated character by character.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument, stringify } from 'yaml';
import { readSimpleYaml } from '../../src/playbook/fast-yaml.js';
import { YAML_OPTIONS } from '../../src/playbook/source.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const identity = (v: string) => v;

/** What the loader's full path reads: `undefined` when `yaml` reports any error. */
function reference(text: string): unknown {
  const doc = parseDocument(text, YAML_OPTIONS);
  if (doc.errors.length) return undefined;
  return doc.toJS({ maxAliasCount: 1000 }) as unknown;
}

function agrees(text: string): void {
  const fast = readSimpleYaml(text, identity);
  if (fast === undefined) return;
  const ref = reference(text);
  expect(ref, `the fast reader accepted a text yaml rejects:\n${text}`).to.not.equal(undefined);
  expect(fast, `different data for:\n${text}`).to.deep.equal(ref);
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return yamlFiles(full);
    return /\.ya?ml$/.test(name) ? [full] : [];
  });
}

const TRICKY = [...'abz09 _-.:#\'"{}[],&*!|>%@`?~\\/$\n'];
const key = fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_-]{0,8}$/);
const scalar = fc.oneof(
  fc.string({ unit: fc.constantFrom(...TRICKY), maxLength: 12 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(
    'yes',
    'no',
    'on',
    'off',
    '0x1F',
    '1e3',
    '012',
    '.inf',
    '~',
    '2026-01-05',
    '${{ inputs.x }}',
  ),
);
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, scalar, tie('list'), tie('map')),
  list: fc.array(tie('node'), { maxLength: 4 }),
  map: fc.dictionary(key, tie('node'), { maxKeys: 4 }),
})).map;
const styles = fc.record({
  flowLevel: fc.constantFrom(undefined, 0, 1, 2),
  quote: fc.constantFrom('PLAIN', 'QUOTE_SINGLE', 'QUOTE_DOUBLE') as fc.Arbitrary<
    'PLAIN' | 'QUOTE_SINGLE' | 'QUOTE_DOUBLE'
  >,
  indent: fc.constantFrom(2, 4),
});

describe('playbook: the fast YAML reader agrees with yaml', () => {
  it('on every playbook and fixture of the repository', () => {
    const files = [
      ...yamlFiles(join(ROOT, 'playbooks')),
      ...yamlFiles(join(ROOT, 'test', 'fixtures')),
      ...yamlFiles(join(ROOT, 'bench')),
    ];
    expect(files.length).to.be.greaterThan(40);
    let read = 0;
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      agrees(text);
      if (readSimpleYaml(text, identity) !== undefined) read++;
    }
    // It is a fast path only if it reads most of what people write.
    expect(read, 'files the fast reader reads itself').to.be.greaterThan(files.length / 3);
  });

  it('reads every shipped playbook itself (what `validate` checks most), quoted keys and all', () => {
    const dir = join(ROOT, 'playbooks');
    const shipped = readdirSync(dir).filter((f) => f.endsWith('.yaml') && !f.endsWith('.test.yaml'));
    expect(shipped.length).to.be.greaterThan(5);
    const left = shipped.filter(
      (f) => readSimpleYaml(readFileSync(join(dir, f), 'utf8'), identity) === undefined,
    );
    expect(left, 'shipped playbooks left to the full parser').to.deep.equal([]);
  });

  it('on YAML written by yaml in many styles, and on those texts mutated', () => {
    let fastlyRead = 0;
    fc.assert(
      fc.property(
        value,
        styles,
        fc.array(fc.tuple(fc.nat(), fc.constantFrom(...TRICKY), fc.boolean()), { maxLength: 3 }),
        (data, style, edits) => {
          const text = stringify(data, {
            ...(style.flowLevel !== undefined ? { flowLevel: style.flowLevel } : {}),
            defaultStringType: style.quote,
            indent: style.indent,
          });
          agrees(text);
          if (readSimpleYaml(text, identity) !== undefined) fastlyRead++;
          let mutated = text;
          for (const [at, ch, insert] of edits) {
            const i = mutated.length ? at % mutated.length : 0;
            mutated = mutated.slice(0, i) + (insert ? ch : '') + mutated.slice(insert ? i : i + 1);
          }
          agrees(mutated);
        },
      ),
      { numRuns: 3000, seed: 20261122 },
    );
    // The property says something only if the fast reader reads a fair share of these texts itself.
    expect(fastlyRead, 'generated texts the fast reader read').to.be.greaterThan(600);
  });
});
