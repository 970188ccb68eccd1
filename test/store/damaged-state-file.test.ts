/**
 * A damaged state file says which file it is and where it comes from (issue: "file is not a database" and
 * "database disk image is malformed", naming nothing).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { SqliteStore } from '../../src/store/sqlite.js';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('SQLite: a damaged state file', () => {
  let dir: string;

  before(async () => {
    dir = tempDir('fleetbook-damaged-state-file-');
  });

  after(async () => {});

  /** A real state file with some weight, checkpointed into the main file, cut to `keep` of its bytes. */
  async function truncated(keep: number): Promise<string> {
    const file = join(dir, 'whole.db');
    const store = new SqliteStore(file);
    store.createRun({
      id: 'r',
      playbook: 'p',
      status: 'succeeded',
      trigger: {},
      inputs: {},
      startedAt: '2026-11-23',
    });
    for (let i = 0; i < 300; i++) store.saveStep('r', `step-${i}`, { padding: 'x'.repeat(3000) });
    await store.close();
    const cut = join(dir, 'truncated.db');
    const bytes = readFileSync(file);
    writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * keep)));
    return cut;
  }

  it('a file that is not a database names itself and FLEETBOOK_STATE', () => {
    const file = join(dir, 'garbage.db');
    writeFileSync(file, randomBytes(5000));
    expect(() => new SqliteStore(file))
      .to.throw(
        `the state file ${file} (FLEETBOOK_STATE) is damaged or is not a fleetbook state file: file is not a database`,
      )
      .with.property('code', 'FB_CONFIG');
  });

  it('a truncated file names itself and FLEETBOOK_STATE', async () => {
    const file = await truncated(0.25);
    expect(() => new SqliteStore(file))
      .to.throw(`the state file ${file} (FLEETBOOK_STATE) is damaged or is not a fleetbook state file`)
      .with.property('code', 'FB_CONFIG');
  });

  it('the CLI says so and exits 2', async () => {
    const file = join(dir, 'garbage-cli.db');
    writeFileSync(file, randomBytes(5000));
    const res = await fleetbook(['runs', 'list'], { FLEETBOOK_STATE: file });
    expect(res.code).to.equal(2);
    expect(res.stderr).to.include(`the state file ${file} (FLEETBOOK_STATE) is damaged`);
  });

  it('serve and run name where the path came from: --state, or the default, not FLEETBOOK_STATE', async () => {
    const file = join(dir, 'garbage-serve.db');
    writeFileSync(file, randomBytes(5000));
    const serve = await fleetbook(
      ['serve', '--playbooks', join(ROOT, 'test/fixtures/testing/manual.yaml'), '--state', file],
      {},
    );
    expect(serve.code, serve.stderr).to.equal(2);
    expect(serve.stderr).to.include(`the state file ${file} (--state) is damaged`);
    mkdirSync(join(dir, '.fleetbook'));
    writeFileSync(join(dir, '.fleetbook', 'state.db'), randomBytes(5000));
    const run = await fleetbook(['run', join(ROOT, 'test/fixtures/testing/manual.yaml')], {}, [], dir);
    expect(run.code, run.stderr).to.equal(2);
    expect(run.stderr).to.include(
      'the state file ./.fleetbook/state.db (the default, FLEETBOOK_STATE being unset) is damaged',
    );
  });
});
