/**
 * What `fleetbook run`, `runs list` and `runs show` print of a run's inputs named like a secret (and of an event's
 * fields named like one): masked, as the console shows them. `runs list --json`, and `runs show --json` of a run
 * with no summary yet (queued, running), printed the stored record: every input as given. Child processes on a
 * state file (dist/ must be built; `npm test` builds it).
 */
import { join } from 'node:path';
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import type { RunRecord } from '../../src/store/store.js';
import { emulatorEnv, fleetbook, stateFile } from '../helpers/cli.js';
import { emulator } from '../runner/helpers.js';

const PLAYBOOK = join(import.meta.dirname, '..', 'fixtures', 'console-secrets', 'rotate-token.yaml');
const DEFAULT_TOKEN = 'default-webhook-token-5150';
const DEFAULT_KEY = 'default-settings-key-6060';
const TYPED_SECRET = 'typed-webhook-token-7070';
const EVENT_SECRET = 'event-client-secret-3030';
/** A run the store holds unfinished: no summary yet. */
const RUNNING = 'abcd1111-0000-4000-8000-000000000001';

describe('fleetbook run, runs list and runs show: inputs named like a secret (child process)', function () {
  this.timeout(60_000);
  let emu: Emulator;
  const state = stateFile();
  let env: Record<string, string>;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 5 });
    env = { ...emulatorEnv(emu), ...state.env };
  });
  after(async () => emu?.close());

  const SECRETS = [DEFAULT_TOKEN, DEFAULT_KEY, TYPED_SECRET, EVENT_SECRET];
  const withoutSecrets = (what: string, text: string) => {
    for (const s of SECRETS) expect(text, what).to.not.include(s);
  };

  it('prints them masked, whatever the command and its format', async () => {
    for (const args of [
      ['run', PLAYBOOK],
      ['run', PLAYBOOK, '--json'],
      ['run', PLAYBOOK, '--input', `webhookToken=${TYPED_SECRET}`],
    ]) {
      const r = await fleetbook(args, env);
      expect(r.code, `fleetbook ${args.join(' ')}: ${r.stderr}`).to.equal(0);
      withoutSecrets(`the output of fleetbook ${args.join(' ')}`, r.stdout + r.stderr);
    }
    await state.withStore((store) =>
      store.createRun({
        id: RUNNING,
        playbook: 'rotate-token',
        status: 'running',
        trigger: { type: 'callback', service: 'DeviceUsage' },
        inputs: { webhookToken: TYPED_SECRET },
        event: { service: 'DeviceUsage', auth: { clientSecret: EVENT_SECRET } },
        startedAt: new Date().toISOString(),
      } satisfies RunRecord),
    );

    const list = await fleetbook(['runs', 'list', '--json'], env);
    expect(list.code, list.stderr).to.equal(0);
    const runs = JSON.parse(list.stdout) as RunRecord[];
    expect(runs.map((r) => r.inputs)).to.deep.equal([
      { webhookToken: '***' },
      {
        account: '0000123456-00001',
        webhookToken: '***',
        settings: { url: 'https://hooks.example/a', apiKey: '***' },
      },
      {
        account: '0000123456-00001',
        webhookToken: '***',
        settings: { url: 'https://hooks.example/a', apiKey: '***' },
      },
      {
        account: '0000123456-00001',
        webhookToken: '***',
        settings: { url: 'https://hooks.example/a', apiKey: '***' },
      },
    ]);
    expect(runs[0]?.event).to.deep.equal({ service: 'DeviceUsage', auth: { clientSecret: '***' } });

    for (const args of [
      ['runs', 'list'],
      ...runs.flatMap((r) => [
        ['runs', 'show', r.id],
        ['runs', 'show', r.id, '--json'],
        ['runs', 'show', r.id, '--json', '--devices'],
      ]),
    ]) {
      const r = await fleetbook(args, env);
      expect(r.code, `fleetbook ${args.join(' ')}: ${r.stderr}`).to.equal(0);
      withoutSecrets(`the output of fleetbook ${args.join(' ')}`, r.stdout + r.stderr);
    }
    // A running run as `GET /runs/{id}` gives it: what it is and its steps so far, not its inputs.
    const shown = await fleetbook(['runs', 'show', RUNNING, '--json'], env);
    expect(JSON.parse(shown.stdout) as object, 'runs show --json of a running run').not.to.have.property(
      'inputs',
    );
  });
});
