/**
 * `POST /playbooks/{name}/runs` takes each input as its JSON type. It read a string as the input's type, as
 * `fleetbook run --input` reads its text: `{"count": "3"}` ran with 3 and `{"force": "true"}` with true, while a
 * number for a string input, and `"dryRun": "true"` in the same body, were refused. A quoted value in a JSON body
 * is most often a template that quoted a placeholder: it is now refused, 400, naming the input, its type and what
 * was given, and no run is stored. The console's form, which sends a list's or an object's field as typed for the
 * daemon to read, and `--input` (text by nature) read text as before. A real `fleetbook serve` (the built binary,
 * dist/ must be built) on an emulator of this process, over loopback.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess } from '../helpers/daemon.js';
import { emulator } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

const DAEMON_TOKEN = 'typed-inputs-daemon-token-000001';
const CONSOLE_TOKEN = 'typed-inputs-console-token-00001';
const PLAYBOOK = 'typed-inputs';
const YAML = `version: 1
name: ${PLAYBOOK}
on: { manual: true }
inputs:
  count: { type: integer, default: 1 }
  ratio: { type: number, default: 1 }
  force: { type: boolean, default: false }
  imeis: { type: array, items: { type: string }, default: [] }
  labels: { type: object, default: {} }
  note: { type: string, default: none }
steps:
  - id: say
    uses: log
    with: { message: '\${{ inputs.count }} \${{ inputs.ratio }} \${{ inputs.force }}' }
`;

type Json = Record<string, unknown>;

describe('daemon: POST /playbooks/{name}/runs takes inputs as their JSON types (child process)', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let daemon: DaemonProcess;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 2 });
    const dir = tempDir('fleetbook-typed-inputs-');
    const playbooks = join(dir, 'playbooks');
    mkdirSync(playbooks);
    writeFileSync(join(playbooks, 'typed-inputs.yaml'), YAML);
    daemon = await DaemonProcess.start('typed-inputs daemon', {
      playbooks,
      state: join(dir, 'state.db'),
      env: {
        ...emulatorEnv(emu),
        FLEETBOOK_DAEMON_TOKEN: DAEMON_TOKEN,
        FLEETBOOK_CONSOLE_TOKEN: CONSOLE_TOKEN,
        FLEETBOOK_CALLBACK_USERNAME: 'typed-inputs-listener',
        FLEETBOOK_CALLBACK_PASSWORD: 'typed-inputs-listener-password',
      },
    });
  });
  after(async () => {
    await daemon?.kill();
    await emu?.close();
  });

  async function start(path: string, token: string, inputs: Json): Promise<[number, Json]> {
    const res = await fetch(`${daemon.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs }),
    });
    return [res.status, (await res.json()) as Json];
  }
  const api = (inputs: Json) => start(`/playbooks/${PLAYBOOK}/runs`, DAEMON_TOKEN, inputs);
  /** The runs of the playbook the store has, as `GET /runs` lists them. */
  const runs = () => daemon.getJson<{ id: string; inputs: Json }[]>(`/runs?playbook=${PLAYBOOK}`);
  const inputsOf = async (runId: string) => (await runs()).find((r) => r.id === runId)?.inputs;

  it('refuses a string for an input of another type, naming it, and stores no run', async () => {
    const before = (await runs()).length;
    const refused: [Json, string][] = [
      [{ count: '3' }, 'input `count` is an integer: give it as a JSON number, not in quotes (got "3")'],
      [{ ratio: '0.5' }, 'input `ratio` is a number: give it as a JSON number, not in quotes (got "0.5")'],
      [
        { force: 'true' },
        'input `force` is a boolean: give it as JSON true or false, not in quotes (got "true")',
      ],
      [
        { imeis: '["350000000000001"]' },
        'input `imeis` is an array: give it as a JSON array, e.g. ["a","b"], not in quotes (got "[\\"350000000000001\\"]")',
      ],
      [
        { labels: '{"k":"v"}' },
        'input `labels` is an object: give it as a JSON object, e.g. {"k":"v"}, not in quotes (got "{\\"k\\":\\"v\\"}")',
      ],
    ];
    for (const [inputs, error] of refused)
      expect(await api(inputs), JSON.stringify(inputs)).to.deep.equal([400, { error }]);
    // The other way round, as before: a number for a string input.
    expect(await api({ note: 3 })).to.deep.equal([
      400,
      { error: 'input `note` must be of type string, got 3' },
    ]);
    expect((await runs()).length).to.equal(before);
  });

  it('takes each input as its JSON type', async () => {
    const inputs = {
      count: 3,
      ratio: 0.5,
      force: true,
      imeis: ['350000000000001'],
      labels: { k: 'v' },
      note: 'n',
    };
    const [status, body] = await api(inputs);
    expect(status, JSON.stringify(body)).to.equal(202);
    expect(await inputsOf(body.runId as string)).to.deep.equal(inputs);
  });

  it("reads the console form's list and object fields as typed text, as before", async () => {
    const [status, body] = await start(`/console/api/playbooks/${PLAYBOOK}/runs`, CONSOLE_TOKEN, {
      count: 3,
      force: true,
      imeis: '["350000000000001"]',
      labels: '{"k":"v"}',
    });
    expect(status, JSON.stringify(body)).to.equal(202);
    expect(await inputsOf(body.runId as string)).to.deep.include({
      count: 3,
      force: true,
      imeis: ['350000000000001'],
      labels: { k: 'v' },
    });
  });
});
