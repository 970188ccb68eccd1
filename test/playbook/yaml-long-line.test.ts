/**
 * A YAML error never echoes more than a short excerpt of a long line: a minified or generated playbook of one
 * 100 KB line printed the whole line (and a caret line as long) for each problem. The excerpt keeps the caret
 * under the character the column points at. Messages that quote the playbook (a duplicate key, an unknown
 * action) are bounded too.
 *
 * The CLI test spawns `bin/fleetbook.js`, which runs the compiled `dist/`: build first when running this file
 * alone.
 */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatText, type Diagnostic } from '../../src/playbook/diagnostics.js';
import { loadPlaybook } from '../../src/playbook/load.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KB100 = 100 * 1024;

/** A playbook on one line of about `size` characters, `tail` written after the long value. */
function oneLine(size: number, tail: string): string {
  const pad = 'abcdefghij'.repeat(Math.ceil(size / 10)).slice(0, size);
  return `{ version: 1, name: long, on: { manual: true }, steps: [ { id: a, uses: log, with: { message: "${pad}" } } ]${tail}\n`;
}

/**
 * Checks the printed diagnostic: three lines, none longer than `max`, and the caret under the character at
 * the diagnostic's column of the source line.
 */
function expectExcerpt(d: Diagnostic, source: string, max = 200): string {
  const text = formatText(d, source);
  const [head, shown, caret] = text.split('\n');
  expect(text.split('\n')).to.have.length(3);
  for (const l of [head, shown, caret]) expect(l!.length, l!.slice(0, 100)).to.be.at.most(max);
  const line = source.split('\n')[d.line - 1]!;
  const at = caret!.indexOf('^');
  expect(at, 'a caret').to.be.greaterThan(0);
  expect(shown!.charAt(at), `the caret is under ${JSON.stringify(line.charAt(d.column - 1))}`).to.equal(
    line.charAt(d.column - 1),
  );
  // The characters around the caret are the source's around the column.
  const gutter = `${String(d.line).padStart(4)} | `.length;
  const around = shown!.slice(Math.max(gutter, at - 20), at + 5).replace(/^…/, '');
  expect(line.slice(0, d.column + 4)).to.satisfy((s: string) => s.endsWith(around.replace(/…$/, '')));
  return text;
}

describe('a YAML error on a long line prints a bounded excerpt', () => {
  it('a 100 KB one-line playbook with a syntax error near its end: an excerpt, the caret on the error', () => {
    const source = oneLine(KB100, ' ] ]');
    const r = loadPlaybook(source, 'long.yaml');
    expect(r.diagnostics.map((d) => d.rule)).to.deep.equal(['yaml']);
    const d = r.diagnostics[0]!;
    expect(d.column).to.be.greaterThan(KB100);
    const text = expectExcerpt(d, source);
    expect(text.length).to.be.lessThan(600);
    expect(text.split('\n')[1]).to.match(/^ {3}1 \| …/);
  });

  it('an error in the middle of a long line: cut on both sides, the caret on the error', () => {
    const half = 'abcdefghij'.repeat(KB100 / 20);
    // A tab before the error: the caret line keeps it, so the caret stays aligned in a terminal.
    const source = `{ version: 1, name: long, x: "${half}", y: [\t1, , 2], z: "${half}" }\n`;
    const d = loadPlaybook(source, 'middle.yaml').diagnostics.find((x) => x.rule === 'yaml');
    expect(d, 'a YAML diagnostic').to.not.equal(undefined);
    const text = expectExcerpt(d!, source);
    expect(text.split('\n')[1]).to.match(/^ {3}1 \| ….*…$/);
    expect(text.split('\n')[2]).to.include('\t');
  });

  it('a message that quotes a 100 KB key or action name quotes an excerpt of it', () => {
    const name = 'k'.repeat(KB100);
    const dup = loadPlaybook(`version: 1\n${name}: 1\n${name}: 2\n`, 'dup.yaml').diagnostics.find(
      (d) => d.rule === 'duplicate-key',
    );
    expect(dup?.message).to.match(/^duplicate key `k{39}…k{11}` \(102402 characters\)$/);
    const unknown = loadPlaybook(
      `version: 1\nname: a\non: { manual: true }\nsteps: [ { id: a, uses: ${name} } ]\n`,
      'unknown.yaml',
    ).diagnostics.find((d) => d.rule === 'unknown-action');
    expect(unknown?.message.length).to.be.lessThan(200);
    for (const d of [dup!, unknown!]) expect(formatText(d, '').length).to.be.lessThan(300);
  });

  it('a short line is printed whole, as before', () => {
    const source = 'version: 1\nname: a\n  bad: indent\n';
    const d = loadPlaybook(source, 'short.yaml').diagnostics[0]!;
    expect(formatText(d, source).split('\n')[1]).to.equal(`   ${d.line} | ${source.split('\n')[d.line - 1]}`);
  });

  it('fleetbook validate prints a few hundred bytes for a 100 KB one-line playbook', function () {
    this.timeout(30_000);
    const dir = mkdtempSync(join(tmpdir(), 'fleetbook-long-line-'));
    try {
      const file = join(dir, 'long.yaml');
      writeFileSync(file, oneLine(KB100, ' ] ]'));
      const r = spawnSync(process.execPath, [join(ROOT, 'bin/fleetbook.js'), 'validate', file], {
        encoding: 'utf8',
      });
      expect(r.status, r.stderr).to.equal(1);
      expect(r.stdout.length).to.be.lessThan(600);
      expect(r.stdout).to.match(/long\.yaml:1:\d{6}: .* \[yaml\]\n {3}1 \| …/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
