/** Opening the state file: a path that cannot be one is refused with the path and the variable named. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { ConfigError } from '../../src/errors.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { fleetbook } from '../helpers/cli.js';

describe('store: opening the state file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleetbook-open-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a directory is refused with a ConfigError that names it and FLEETBOOK_STATE', () => {
    let error: unknown;
    try {
      new SqliteStore(dir).close();
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(ConfigError);
    expect((error as Error).message).to.equal(
      `cannot open the state file ${dir} (FLEETBOOK_STATE): unable to open database file; it must be a file path in a writable directory`,
    );
  });

  it('a file below a file is refused the same way', () => {
    const file = join(dir, 'state.db');
    new SqliteStore(file).close();
    expect(() => new SqliteStore(join(file, 'inner.db'))).to.throw(
      ConfigError,
      `cannot open the state file ${join(file, 'inner.db')} (FLEETBOOK_STATE): `,
    );
  });

  it('the CLI says so in one line and exits non-zero (child process)', async function () {
    this.timeout(30_000);
    const r = await fleetbook(['runs', 'list'], { FLEETBOOK_STATE: dir });
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.equal(
      `fleetbook: cannot open the state file ${dir} (FLEETBOOK_STATE): unable to open database file; it must be a file path in a writable directory\n`,
    );
  });
});
