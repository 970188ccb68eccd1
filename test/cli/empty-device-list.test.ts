/**
 * `fleetbook run` and `fleetbook runs show` of a run whose device step and forEach were given no devices: each
 * step's line says `skipped` and why, and its log line does too. Before, both read `succeeded calls 0`, and
 * nothing said that no request was sent. The built binary in a child process, against the embedded emulator,
 * on a state file of its own (dist/ must be built; `npm test` builds it).
 */
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { fleetbook } from '../helpers/cli.js';
import { stepLines } from '../helpers/step-lines.js';
import { tempDir } from '../helpers/temp.js';

/** A listing that finds no device, then a device step and a forEach over its empty items. */
const PLAYBOOK = join(import.meta.dirname, '..', 'fixtures', 'empty-device-list', 'suspend-over-usage.yaml');

const SUSPEND = 'no devices: `devices` is an empty list, nothing was sent';
const EACH = 'no items: `forEach.items` is an empty list, no iteration ran';

describe('fleetbook run and runs show: a step given no devices (child process)', function () {
  this.timeout(60_000);
  let tmp: string;
  let env: Record<string, string>;

  before(async () => {
    tmp = tempDir('fleetbook-empty-device-list-');
    env = { FLEETBOOK_STATE: join(tmp, 'state.db'), FLEETBOOK_LOG_LEVEL: 'info' };
    await copyFile(PLAYBOOK, join(tmp, 'over.yaml'));
  });

  it('prints the steps skipped and why, logs it, and runs show says the same', async () => {
    const r = await fleetbook(['run', join(tmp, 'over.yaml')], env);
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).to.match(/^run \S+ of suspend-over-usage: succeeded$/);
    // Each step's line: its id, status and words (stepLines; its time between them).
    const said = (out: string) => stepLines(out).map(([id, status, , rest]) => [id, status, rest]);
    expect(said(r.stdout)).to.deep.include.members([
      ['  suspend', 'skipped', `(${SUSPEND})`],
      ['  each', 'skipped', `(${EACH})`],
    ]);
    const logged = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.message === 'step ended');
    expect(logged.find((l) => l.step === 'suspend')).to.include({ status: 'skipped', reason: SUSPEND });
    expect(logged.find((l) => l.step === 'each')).to.include({ status: 'skipped', reason: EACH });

    const runId = /^run (\S+) of/.exec(lines[0]!)![1]!;
    const shown = await fleetbook(['runs', 'show', runId], env);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(said(shown.stdout)).to.deep.include.members([
      ['  suspend', 'skipped', `(${SUSPEND})`],
      ['  each', 'skipped', `(${EACH})`],
    ]);
    const json = await fleetbook(['runs', 'show', runId, '--json'], env);
    const s = JSON.parse(json.stdout) as RunSummary;
    expect(s.steps.find((x) => x.id === 'suspend')).to.include({ status: 'skipped', reason: SUSPEND });
  });
});
