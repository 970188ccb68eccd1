/**
 * `npm start` builds only when something the build reads changed since the last build
 * (scripts/build-if-changed.mjs), on a project of its own in a temp directory whose `npm run build` only
 * counts its runs and writes what the real build writes last.
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { tempDir } from '../helpers/temp.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'build-if-changed.mjs');

/**
 * A build that logs each run and writes dist/generated/node.json (which Node built it) and rules.json, as
 * scripts/emit-rules.ts does last.
 */
const BUILD = `
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
appendFileSync('builds.log', 'built\\n');
if (process.env.FAIL_BUILD) process.exit(3);
mkdirSync('dist/generated', { recursive: true });
writeFileSync('dist/generated/node.json', JSON.stringify({ v8: process.versions.v8, arch: process.arch }));
writeFileSync('dist/generated/rules.json', '{}');
`;

function start(dir: string, env: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [SCRIPT],
      { cwd: dir, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 },
      (err) => resolve(err ? Number((err as { code?: number }).code ?? 1) : 0),
    );
  });
}

describe('npm start: a build only when something changed', function () {
  this.timeout(60_000);
  let tmp: string;
  let dir: string;
  const builds = async () =>
    (await readFile(join(dir, 'builds.log'), 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
  /** Sets a file's modification time `seconds` from now. */
  const touch = (rel: string, seconds: number) => {
    const t = new Date(Date.now() + seconds * 1000);
    return utimes(join(dir, rel), t, t);
  };

  beforeEach(async () => {
    tmp = tempDir('fleetbook-start-');
    dir = tmp;
    await mkdir(join(dir, 'src', 'cli'), { recursive: true });
    await mkdir(join(dir, 'scripts'));
    await writeFile(join(dir, 'package.json'), JSON.stringify({ scripts: { build: 'node build.mjs' } }));
    await writeFile(join(dir, 'build.mjs'), BUILD);
    await writeFile(join(dir, 'src', 'cli', 'main.ts'), 'export {};\n');
    await writeFile(join(dir, 'tsconfig.json'), '{}');
  });

  it('is what `npm start` runs before the daemon, and `npm test` before the tests', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.start).to.equal(
      'node scripts/build-if-changed.mjs && node bin/fleetbook.js serve --playbooks playbooks',
    );
    expect(pkg.scripts.test).to.match(/ && node scripts\/build-if-changed\.mjs && mocha$/);
  });

  it('builds when there is no build, and not again when nothing changed', async () => {
    expect(await start(dir)).to.equal(0);
    expect(await builds()).to.equal(1);
    expect(await start(dir)).to.equal(0);
    expect(await start(dir)).to.equal(0);
    expect(await builds()).to.equal(1);
  });

  for (const [what, change] of [
    ['a source changed', () => touch('src/cli/main.ts', 5)],
    ['a source was added', () => writeFile(join(dir, 'src', 'cli', 'new.ts'), 'export {};\n')],
    ['a source was removed', () => rm(join(dir, 'src', 'cli', 'main.ts'))],
    ['the TypeScript configuration changed', () => touch('tsconfig.json', 5)],
    ['package.json changed', () => touch('package.json', 5)],
    [
      'another Node built it',
      () =>
        writeFile(join(dir, 'dist', 'generated', 'node.json'), JSON.stringify({ v8: '1.0', arch: 'x64' })),
    ],
  ] as const) {
    it(`builds again when ${what}`, async () => {
      expect(await start(dir)).to.equal(0);
      // The last build a minute ago, every source before it: nothing is newer, until the change.
      for (const rel of ['src/cli/main.ts', 'src/cli', 'src', 'tsconfig.json', 'package.json'])
        await touch(rel, -120);
      await touch('dist/generated/rules.json', -60);
      expect(await start(dir)).to.equal(0);
      expect(await builds()).to.equal(1);
      await change();
      expect(await start(dir)).to.equal(0);
      expect(await builds()).to.equal(2);
    });
  }

  it('a failed build fails the start, and the next start builds again', async () => {
    expect(await start(dir, { FAIL_BUILD: '1' })).to.not.equal(0);
    expect(await start(dir)).to.equal(0);
    expect(await builds()).to.equal(2);
  });
});
