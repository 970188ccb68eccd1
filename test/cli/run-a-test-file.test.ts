/**
 * `run`, `serve --playbooks` and `store prune --playbooks` given a playbook test (`NAME.test.yaml`, a name the
 * shell completes as readily as `NAME.yaml`) say it is one (child processes; dist/ must be built), as validate
 * does, rather than check it against the playbook schema: `version is required`, `name is required`, ... and an
 * unknown field for each member of the test.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const TEST = join(import.meta.dirname, '..', '..', 'playbooks', 'sync-location-exclusions.test.yaml');
const SAYS = `${TEST} is a playbook test, not a playbook: fleetbook test runs it`;

describe('a playbook test given as a playbook (child process)', function () {
  this.timeout(60_000);
  const env = () => ({ FLEETBOOK_STATE: join(tempDir('fb-run-test-file-'), 'state.db') });

  it('run: exit 2, saying so', async () => {
    const r = await fleetbook(['run', TEST], env());
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([2, '', `fleetbook: ${SAYS}\n`]);
  });

  it('serve --playbooks: exit 2, not starting', async () => {
    const r = await fleetbook(['serve', '--playbooks', TEST, '--listen', '127.0.0.1:0'], env());
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([2, '', `fleetbook: ${SAYS}; not starting\n`]);
  });

  it('store prune --playbooks: exit 2, nothing pruned', async () => {
    const e = env();
    // A store to prune: the run makes it.
    const made = await fleetbook(['run', join(TEST, '..', 'sync-location-exclusions.yaml')], {
      ...e,
      FLEETBOOK_LOG_LEVEL: 'error',
    });
    expect(made.code, made.stderr).to.equal(0);
    const r = await fleetbook(['store', 'prune', '--older-than', '1d', '--playbooks', TEST], e);
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      `fleetbook store prune: ${SAYS}; nothing pruned\n`,
    ]);
  });
});
