/**
 * The layers of src/ (src/ARCHITECTURE.md) are enforced by the lint configuration. A change to it that drops a
 * rule, or a folder of src/ that no rule covers, would pass the lint silently: these probes, linted as if they
 * were files of src/, fail instead. Nothing is written to disk.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { ESLint } from 'eslint';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The layer rules' messages on `code` linted as the file `path` of the repository. */
async function layerErrors(eslint: ESLint, path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${root}${path}` });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-syntax')
    .map((m) => m.message);
}

describe('lint: the layers of src/', function () {
  // Loading the configuration and the TypeScript parser takes a few seconds on a busy machine.
  this.timeout(60_000);
  let eslint: ESLint;
  before(() => {
    eslint = new ESLint({ cwd: root });
  });

  it('covers every folder and file of src/: none of them may import the CLI', async () => {
    const entries = readdirSync(`${root}src`, { withFileTypes: true }).filter(
      (e) => e.name !== 'cli' && (e.isDirectory() || e.name.endsWith('.ts')),
    );
    expect(entries.length).to.be.greaterThan(10);
    for (const e of entries) {
      const [path, from] = e.isDirectory()
        ? [`src/${e.name}/layer-probe.ts`, '../cli/main.js']
        : [`src/${e.name}`, './cli/main.js'];
      const errors = await layerErrors(eslint, path, `import { x } from '${from}';\nexport const y = x;\n`);
      expect(errors, `${path} importing ${from}`).to.have.length(1);
      expect(errors[0]).to.include('src/cli/');
    }
  });

  const cases: [path: string, code: string, refused: string | undefined][] = [
    [
      'src/store/probe.ts',
      "import { runPlaybook } from '../runner/runner.js';",
      'src/runner/ is in a layer above',
    ],
    ['src/runner/probe.ts', "import { x } from '../daemon/daemon.js';", 'src/daemon/ is in a layer above'],
    ['src/daemon/probe.ts', "import { x } from '../cli/run.js';", 'nothing outside the CLI'],
    ['src/runner/probe.ts', "import type { Emulator } from '../emulator/index.js';", 'start the emulator'],
    ['src/actions/probe.ts', "export const x = () => import('../emulator/index.js');", 'start the emulator'],
    ['src/api/schemas/probe.ts', "export const x = () => import('../../daemon/daemon.js');", 'layer above'],
    ['src/emulator/probe.ts', "import type { Store } from '../store/store.js';", 'the emulator imports only'],
    ['src/util/probe.ts', "import { ConfigError } from '../errors.js';", 'src/errors.ts is in a layer above'],
    ['src/errors.ts', "import { CATALOG } from './api/catalog.js';", 'src/api/ is in a layer above'],
    ['src/index.ts', "export { startDaemon } from './daemon/daemon.js';", 'not the shells'],
    // What the layers allow stays allowed.
    ['src/runner/probe.ts', "import type { Store } from '../store/store.js';", undefined],
    ['src/emulator/probe.ts', "import { CATALOG } from '../api/catalog.js';", undefined],
    ['src/connect.ts', "export const x = () => import('./emulator/index.js');", undefined],
    ['src/daemon/probe.ts', "import { connect } from '../connect.js';", undefined],
    ['src/cli/probe.ts', "export const x = () => import('../daemon/daemon.js');", undefined],
  ];
  for (const [path, code, refused] of cases) {
    it(`${refused ? 'refuses' : 'allows'} in ${path}: ${code}`, async () => {
      const errors = await layerErrors(eslint, path, `${code}\nexport const probe = 1;\n`);
      if (refused === undefined) expect(errors).to.deep.equal([]);
      else {
        expect(errors).to.have.length(1);
        expect(errors[0]).to.include(refused);
      }
    });
  }
});
