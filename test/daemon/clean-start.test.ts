/**
 * `fleetbook serve` starts without a warning from Node or a library on its output: a user reads every line
 * there, and one the daemon did not write (a framework's deprecation) reads as a problem of theirs. The built
 * binary in a child process against an emulator (dist/ must be built; `npm test` builds it).
 */
import { join } from 'node:path';
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess } from '../helpers/daemon.js';
import { emulator } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

describe('serve: a clean start', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let dir: string;
  let daemon: DaemonProcess | undefined;

  before(async () => {
    emu = await emulator();
    dir = tempDir('fleetbook-clean-start-');
  });
  after(async () => {
    await daemon?.kill();
    await emu?.close();
  });

  it('prints only its own lines: no warning of Node or of a library', async () => {
    daemon = await DaemonProcess.start('clean daemon', {
      playbooks: join(import.meta.dirname, '..', '..', 'playbooks'),
      state: join(dir, 'state.db'),
      env: {
        ...emulatorEnv(emu),
        FLEETBOOK_CALLBACK_USERNAME: 'listener',
        FLEETBOOK_CALLBACK_PASSWORD: 'listener-password',
      },
    });
    // The console and the runs are served: what starts lazily has started.
    expect((await fetch(`${daemon.url}/runs`)).status).to.equal(200);
    const lines = `${daemon.stdout}\n${daemon.stderr}`.split('\n').filter(Boolean);
    const foreign = lines.filter(
      (l) => !l.startsWith('{') && !l.startsWith('fleetbook serve:') && !l.startsWith('  '),
    );
    expect(foreign).to.deep.equal([]);
    expect(lines.filter((l) => /Warning|\(node:\d+\)/.test(l))).to.deep.equal([]);
  });
});
