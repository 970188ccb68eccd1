/**
 * `fleetbook serve` says the warnings of its playbooks, as `fleetbook validate` of the same directory gives them,
 * the set's own among them (`ledger-playbook`: a ledger query that names none of the playbooks served), at start
 * and at each reload: a daemon that took them silently left a misspelt name finding no run every morning. The
 * built binary in a child process against an emulator (dist/ must be built; `npm test` builds it).
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { DaemonWorld, untilDaemons, type DaemonProcess } from '../helpers/daemon.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'playbooks', 'ledger-playbook');

/** The `warnings` of each warning line the daemon logged about the playbooks, in order. */
function warned(d: DaemonProcess): string[][] {
  return d
    .logs()
    .filter((l) => l.level === 'warn' && String(l.message).includes('warning(s) in the playbooks of'))
    .map((l) => l.warnings as string[]);
}

describe('serve: the warnings of its playbooks', function () {
  this.timeout(60_000);
  let world: DaemonWorld;

  before(async () => {
    world = await DaemonWorld.create('playbook-warnings', {
      user: 'listener',
      password: 'listener-password',
    });
  });
  after(() => world?.close());

  it('says each at start, with its file:line:col and rule, and again after a reload as the files are then', async () => {
    const dir = join(world.dir, 'playbooks');
    cpSync(FIXTURE, dir, { recursive: true });
    const morning = join(dir, 'b-morning.yaml');
    const d = await world.start('warned daemon', dir);
    const [atStart] = warned(d);
    expect(atStart, 'a warning line at start').to.not.equal(undefined);
    expect(atStart).to.have.length(3);
    expect(atStart?.[0]).to.equal(
      `${morning}:11:23: warning: ledger.query: no playbook checked with this one is named \`nightly-location-reprot\` (did you mean \`nightly-location-report\`?): the query would find no run of it, and no device [ledger-playbook]`,
    );
    expect(atStart?.every((w) => w.startsWith(`${morning}:`) && w.endsWith('[ledger-playbook]'))).to.equal(
      true,
    );

    // The misspelling mended: the reload says the two warnings left.
    writeFileSync(
      morning,
      readFileSync(morning, 'utf8').replace('nightly-location-reprot', 'nightly-location-report'),
    );
    d.proc.kill('SIGHUP');
    const afterReload = await untilDaemons([d], 'the reload to say its warnings', () =>
      Promise.resolve(warned(d)[1]),
    );
    expect(afterReload).to.have.length(2);
    expect(afterReload.some((w) => w.includes('nightly-location-reprot'))).to.equal(false);
    expect(afterReload[0]).to.include(`${morning}:31:23: warning:`);
  });
});
