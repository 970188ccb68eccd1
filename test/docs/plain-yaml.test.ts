/**
 * Plain YAML (issue 18): every shipped playbook and every YAML block of README.md and docs/*.md is YAML to
 * any tool, not only to fleetbook: the `yaml` package's strict parse (no custom tags; what yaml-language-server
 * uses) and prettier's YAML parser both read it, and a block that is a whole playbook passes `validate` with
 * no diagnostic at all.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'prettier';
import { parseDocument } from 'yaml';
import { loadPlaybook } from '../../src/playbook/load.js';
import { yamlBlocks } from '../helpers/markdown.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** Shipped playbooks: `playbooks/*.yaml`, their tests beside them included. */
const playbooks = readdirSync(join(ROOT, 'playbooks'))
  .filter((f) => /\.ya?ml$/.test(f))
  .map((f) => `playbooks/${f}`);

const docs = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith('.md'),
);

const isPlaybook = (text: string) => /^version:/m.test(text) && /^steps:/m.test(text);

async function plainYaml(text: string, where: string): Promise<void> {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
  expect(
    doc.errors.map((e) => e.message.split('\n')[0]),
    `${where}: yaml`,
  ).to.deep.equal([]);
  expect(
    doc.warnings.map((e) => e.message.split('\n')[0]),
    `${where}: yaml`,
  ).to.deep.equal([]);
  try {
    await format(text, { parser: 'yaml' });
  } catch (e) {
    expect.fail(`${where}: prettier: ${(e as Error).message.split('\n')[0]}`);
  }
}

describe('plain YAML: playbooks and the YAML of the docs', () => {
  it('finds the playbooks and the YAML blocks', () => {
    expect(playbooks.length).to.be.greaterThan(5);
    expect(yamlBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8')).length).to.be.at.least(2);
  });

  for (const file of playbooks) {
    it(`${file} is YAML to the yaml package and to prettier`, async () => {
      await plainYaml(readFileSync(join(ROOT, file), 'utf8'), file);
    });
  }

  for (const file of docs) {
    it(`the YAML blocks of ${file} are YAML to every tool, and a whole playbook among them passes validate`, async () => {
      for (const { line, text } of yamlBlocks(readFileSync(join(ROOT, file), 'utf8'))) {
        await plainYaml(text, `${file}:${line}`);
        if (!isPlaybook(text)) continue;
        const r = loadPlaybook(text, `${file}:${line}`);
        expect(
          r.diagnostics.map((d) => `${file}:${line + d.line - 1}:${d.column}: ${d.message} [${d.rule}]`),
        ).to.deep.equal([]);
      }
    });
  }

  it('tells a block with an unquoted expression in { } from plain YAML', async () => {
    let failed = false;
    try {
      await plainYaml('with: { accountName: ${{ inputs.account }} }\n', 'lenient');
    } catch {
      failed = true;
    }
    expect(failed).to.equal(true);
  });
});
