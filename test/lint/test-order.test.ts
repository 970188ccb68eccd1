/**
 * .mocharc.json hands the slowest test files to the two parallel workers first, so that none of them starts last
 * and leaves the other worker idle at the end of the run; a glob then takes every other file, leaving those out by
 * their names. A file of another folder with one of those names would be left out too, and never run: each name
 * the glob leaves out must be that of exactly one test file, listed before it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('lint: the order of the test files', () => {
  it('runs every test file once: the slowest first, then the others', () => {
    const { spec } = JSON.parse(readFileSync(`${root}.mocharc.json`, 'utf8')) as { spec: string[] };
    const first = spec.slice(0, -1);
    const rest = /^test\/\*\*\/!\(([\w|-]+)\)\.test\.ts$/.exec(spec.at(-1)!);
    expect(rest, `the last spec, ${spec.at(-1)}`).to.not.equal(null);
    for (const file of first) expect(existsSync(`${root}${file}`), file).to.equal(true);
    const names = (name: string) => basename(name, '.test.ts');
    expect(rest![1]!.split('|').sort(), 'the names the glob leaves out').to.deep.equal(
      first.map(names).sort(),
    );

    const all = readdirSync(`${root}test`, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => `test/${f}`);
    const leftOut = new Set(first.map(names));
    expect(all.filter((f) => leftOut.has(names(f))).sort(), 'the files of those names').to.deep.equal(
      [...first].sort(),
    );
  });
});
