/**
 * `fleetbook runs` reads the store and nothing else: in a child process, as a user runs it, it loads neither the
 * runner, the API client, a schema library nor ajv's compiler (the configuration is checked by the validator
 * the build generated). dist/ must be built (`npm test` builds it).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { SqliteStore } from '../../src/store/sqlite.js';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../runner/helpers.js';

const MODULE_LOG = join(import.meta.dirname, '..', 'helpers', 'module-log.mjs');

describe('fleetbook runs (child process)', function () {
  this.timeout(30_000);
  let tmp: { dir: string; close(): Promise<void> };
  let env: Record<string, string>;

  before(async () => {
    tmp = await tempDir();
    env = { FLEETBOOK_STATE: join(tmp.dir, 'state.db'), MODULE_LOG: join(tmp.dir, 'modules.txt') };
    const store = new SqliteStore(env.FLEETBOOK_STATE as string);
    store.createRun({
      id: 'run-listed-1',
      playbook: 'listed',
      status: 'succeeded',
      trigger: { type: 'manual' },
      inputs: {},
      startedAt: '2026-11-22T00:00:00.000Z',
      endedAt: '2026-11-22T00:00:01.000Z',
    });
    store.close();
  });
  after(() => tmp.close());

  async function loaded(): Promise<string[]> {
    return (await readFile(env.MODULE_LOG as string, 'utf8')).split('\n').filter(Boolean);
  }

  it('runs list prints the run, having loaded only the store, the configuration and its validator', async () => {
    const r = await fleetbook(['runs', 'list'], env, ['--import', MODULE_LOG]);
    expect(r.stderr).to.equal('');
    expect(r.code).to.equal(0);
    expect(r.stdout).to.match(/^run-listed-1 {2}2026-11-22T00:00:00\.000Z {2}succeeded {2}listed\n$/);
    const modules = await loaded();
    // The log works: it saw the command, the store and the configuration's generated validator.
    expect(modules.some((m) => m.endsWith('/dist/cli/runs.js'))).to.equal(true);
    expect(modules.some((m) => m.includes('/node_modules/better-sqlite3/'))).to.equal(true);
    expect(modules.some((m) => m.endsWith('/dist/generated/config.cjs'))).to.equal(true);
    const heavy = modules.filter((m) =>
      /\/node_modules\/(typebox|undici|yaml|winston)\/|\/node_modules\/ajv\/dist\/(compile|core|ajv|2020)|\/dist\/(runner|api\/client|api\/catalog|playbook\/load)\.?/.test(
        m,
      ),
    );
    expect(heavy).to.deep.equal([]);
  });

  it('runs show of an unknown run exits 1 and says so', async () => {
    const r = await fleetbook(['runs', 'show', 'no-such-run'], env);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.equal('fleetbook: no run no-such-run\n');
  });

  it('an invalid configuration is reported by variable, with the generated validator', async () => {
    const r = await fleetbook(['runs', 'list'], { ...env, FLEETBOOK_CONCURRENCY: '0' }, [
      '--import',
      MODULE_LOG,
    ]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include('FLEETBOOK_CONCURRENCY');
    expect(r.stderr).to.include('>= 1');
    // Explaining the problem compiles the schema: only then is ajv's compiler loaded.
    expect((await loaded()).some((m) => m.includes('/node_modules/ajv/dist/compile/'))).to.equal(true);
  });
});
