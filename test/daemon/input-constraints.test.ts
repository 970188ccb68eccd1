/**
 * Input constraints over HTTP, on `fleetbook serve` in a child process (the built binary, dist/ must be built)
 * with the example playbooks, against an emulator of this process:
 * - `POST /playbooks/{name}/runs` refuses inputs that break a constraint (a sensor given twice, an id that is no
 *   UUID) with 400 and the words of the CLI, and stores no run: the rollout configured a repeated sensor twice;
 *   one without a required input says how its JSON body gives it;
 * - the console's playbooks API serves each input's constraints, for the run form to show them.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess } from '../helpers/daemon.js';
import { emulator } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

const TOKEN = 'input-constraints-daemon-token-01';
const PLAYBOOK = 'rollout-sensor-configuration';
const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const A = '30ca92f4-cca3-467f-b9ef-100000000001';
const B = '1963d0fb-5aba-441c-88e1-100000000003';

describe('serve: input constraints over HTTP', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let dir: string;
  let daemon: DaemonProcess;
  const state = () => join(dir, 'state.db');

  before(async () => {
    emu = await emulator();
    dir = tempDir('fleetbook-input-constraints-');
    daemon = await DaemonProcess.start('input-constraints daemon', {
      playbooks: join(import.meta.dirname, '..', '..', 'playbooks'),
      state: state(),
      env: {
        ...emulatorEnv(emu),
        FLEETBOOK_CALLBACK_USERNAME: 'listener',
        FLEETBOOK_CALLBACK_PASSWORD: 'listener-password',
        FLEETBOOK_DAEMON_TOKEN: TOKEN,
      },
    });
  });
  after(async () => {
    await daemon?.kill();
    await emu?.close();
  });

  const start = async (inputs: unknown) => {
    const res = await fetch(`${daemon.url}/playbooks/${PLAYBOOK}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs }),
    });
    return [res.status, (await res.json()) as unknown];
  };

  it('POST /playbooks/{name}/runs: 400 for a value that breaks a constraint, and no run stored', async () => {
    expect(await start({ sensors: [A, B, A] })).to.deep.equal([
      400,
      { error: `input \`sensors\`: item 2 "${A}" is given twice (uniqueItems)` },
    ]);
    expect(await start({ sensors: [A, 'x'] })).to.deep.equal([
      400,
      { error: `input \`sensors\`: item 1 "x" does not match \`${UUID}\` (items.pattern)` },
    ]);
    expect(await start({ sensors: [] })).to.deep.equal([
      400,
      { error: 'input `sensors`: has 0 items, fewer than 1 (minItems)' },
    ]);
    // A required input left out: how the body gives it, not --input.
    expect(await start({})).to.deep.equal([
      400,
      {
        error:
          'input `sensors` (array) is required: Resource ids (UUIDs) of the sensors to configure, the canary first. Give it in the JSON body: {"inputs": {"sensors": [...]}}',
      },
    ]);
    const db = new Database(state(), { readonly: true, fileMustExist: true });
    try {
      const n = db.prepare('SELECT count(*) AS n FROM runs WHERE playbook = ?').get(PLAYBOOK) as {
        n: number;
      };
      expect(n.n, 'runs stored by refused requests').to.equal(0);
    } finally {
      db.close();
    }
    const [status] = await start({ sensors: [A, B] });
    expect(status, 'distinct UUIDs start a run').to.equal(202);
  });

  it("the console's playbooks API serves each input's constraints", async () => {
    const res = await fetch(`${daemon.url}/console/api/playbooks`);
    const { playbooks } = (await res.json()) as {
      playbooks: { name: string; inputs: Record<string, unknown> }[];
    };
    const rollout = playbooks.find((p) => p.name === PLAYBOOK);
    expect(rollout?.inputs.sensors).to.deep.equal({
      type: 'array',
      description: 'Resource ids (UUIDs) of the sensors to configure, the canary first.',
      required: true,
      items: { type: 'string', pattern: UUID },
      minItems: 1,
      uniqueItems: true,
    });
  });
});
