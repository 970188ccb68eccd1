/**
 * Every command that opens the store takes `--state`, as `serve` and the `store` commands do: an operator who
 * started `serve --state /srv/fleet.db` reads its runs with `runs list --state /srv/fleet.db`. `runs`, `logins`
 * and `run` refused the flag (`unknown option '--state'`), and read only FLEETBOOK_STATE. The flag wins over the
 * variable, and a file it names that does not exist is refused naming `--state`, never created by a reader.
 * Child processes of the built CLI (dist/ must be built).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { emulatorEnv, fleetbook, stateFile } from '../helpers/cli.js';
import { emulator } from '../runner/helpers.js';

const RUN_ID = '01a22f10-0000-7000-8000-000000000001';

describe('--state on the commands that read or write the store (child process)', function () {
  this.timeout(60_000);
  const state = stateFile(async (store) => {
    store.createRun({
      id: RUN_ID,
      playbook: 'nightly',
      status: 'succeeded',
      trigger: { type: 'manual' },
      inputs: {},
      startedAt: '2026-11-30T02:00:00.000Z',
      endedAt: '2026-11-30T02:00:01.000Z',
    });
  });
  /** FLEETBOOK_STATE naming another file, which the flag must win over. */
  const other = () => ({ FLEETBOOK_STATE: join(state.dir, 'other.db') });

  it('runs list, runs show and logins read the file --state names', async () => {
    const list = await fleetbook(['runs', 'list', '--state', state.file], other());
    expect([list.code, list.stderr]).to.deep.equal([0, '']);
    expect(list.stdout).to.include(RUN_ID);
    const show = await fleetbook(
      ['runs', 'show', RUN_ID.slice(0, 13), '--json', '--state', state.file],
      other(),
    );
    expect([show.code, show.stderr]).to.deep.equal([0, '']);
    expect((JSON.parse(show.stdout) as { playbook: string }).playbook).to.equal('nightly');
    const logins = await fleetbook(['logins', '--state', state.file], other());
    expect([logins.code, logins.stderr]).to.deep.equal([0, '']);
    expect(existsSync(other().FLEETBOOK_STATE), 'the file FLEETBOOK_STATE names').to.equal(false);
  });

  it('a reader refuses a missing file --state names, naming the flag', async () => {
    const missing = join(state.dir, 'missing.db');
    const r = await fleetbook(['runs', 'list', '--state', missing], {});
    expect(r.code).to.equal(2);
    expect(r.stderr).to.include(`${missing} (--state) does not exist`);
    expect(existsSync(missing)).to.equal(false);
  });

  it('call on the service counts its logins in the file --state names, creating it', async () => {
    const emu = await emulator({ devicesPerAccount: 2 });
    try {
      const file = join(state.dir, 'made-by-call.db');
      const body = JSON.stringify({ accountName: emu.defaults.accounts[0] });
      const r = await fleetbook(['call', 'devices.list', '--body', body, '--state', file], {
        ...emulatorEnv(emu),
        ...other(),
      });
      expect(r.code, r.stderr).to.equal(0);
      expect([existsSync(file), existsSync(other().FLEETBOOK_STATE)]).to.deep.equal([true, false]);
    } finally {
      await emu.close();
    }
  });

  it('run records its run in the file --state names, creating it', async () => {
    const file = join(state.dir, 'made-by-run.db');
    const playbook = join(import.meta.dirname, '..', '..', 'playbooks', 'sync-location-exclusions.yaml');
    const r = await fleetbook(['run', playbook, '--dry-run', '--state', file], other());
    expect(r.code, r.stderr).to.equal(0);
    const list = await fleetbook(['runs', 'list', '--json', '--state', file], {});
    expect(list.code, list.stderr).to.equal(0);
    expect((JSON.parse(list.stdout) as { playbook: string }[]).map((x) => x.playbook)).to.deep.equal([
      'sync-location-exclusions',
    ]);
  });
});
