/**
 * `fleetbook run --event` as a user runs it: a callback playbook run with an event (from a file or stdin), the
 * event checked first; without on.manual and without --event a refusal that says which to add; an array input
 * that says to pass JSON.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { eventExample } from '../../src/events/index.js';
import { BIN, fleetbook } from '../helpers/cli.js';

const PLAYBOOKS = join(import.meta.dirname, '..', '..', 'playbooks');
const SUSPEND = join(PLAYBOOKS, 'suspend-on-overuse.yaml');

describe('fleetbook run --event', () => {
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetbook-run-event-'));
    env = { FLEETBOOK_STATE: join(dir, 'state.db'), FLEETBOOK_REPORTS_DIR: dir };
  });
  after(() => rm(dir, { recursive: true, force: true }));

  /** The DeviceUsage example, naming two active devices of the embedded emulator's first account. */
  function overuse(): Record<string, unknown> {
    const e = eventExample('DeviceUsage') as {
      deviceResponse: { alertServiceResponse: { accountName: string; payAsYouGo: { deviceIds: unknown[] } } };
    };
    e.deviceResponse.alertServiceResponse.accountName = '0000123456-00001';
    e.deviceResponse.alertServiceResponse.payAsYouGo.deviceIds = [
      { id: '350260700638360', kind: 'IMEI' },
      { id: '350260700638378', kind: 'IMEI' },
    ];
    return e;
  }

  it('runs a callback playbook with the event of a file, as the daemon would', async () => {
    const file = join(dir, 'overuse.json');
    await writeFile(file, JSON.stringify(overuse()));
    const r = await fleetbook(['run', SUSPEND, '--event', file, '--json'], env);
    expect(r.code, r.stderr).to.equal(0);
    const summary = JSON.parse(r.stdout) as {
      status: string;
      steps: { id: string; devices: { succeeded: number } }[];
    };
    expect(summary.status).to.equal('succeeded');
    expect(summary.steps.find((s) => s.id === 'suspend')?.devices.succeeded).to.equal(2);
  });

  it('reads the event from stdin with -', async () => {
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [BIN, 'run', SUSPEND, '--event', '-', '--json'],
        { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 },
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end(JSON.stringify(overuse()));
    });
    expect(r.code, r.stderr).to.equal(0);
    expect((JSON.parse(r.stdout) as { status: string }).status).to.equal('succeeded');
  });

  it('checks the event against its service schema first, and runs nothing when it does not fit', async () => {
    const file = join(dir, 'wrong.json');
    const e = overuse() as { deviceResponse: { alertServiceResponse: Record<string, unknown> } };
    delete e.deviceResponse.alertServiceResponse.triggerName;
    await writeFile(file, JSON.stringify(e));
    const r = await fleetbook(['run', SUSPEND, '--event', file], env);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.include(`--event ${file}: the event is not a DeviceUsage event:`);
    expect(r.stderr).to.include('event/deviceResponse/alertServiceResponse/triggerName');
  });

  it('refuses a playbook without on.manual and without --event, saying which to add', async () => {
    const r = await fleetbook(['run', SUSPEND], env);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.equal(
      'fleetbook: playbook suspend-on-overuse runs on a callback (DeviceUsage): give it an event (`--event FILE`, or `event:` in a test), or add `manual: true` under `on:` to run it without one\n',
    );
  });

  it('says at once that the event and a secret are both missing', async () => {
    const file = join(dir, 'needs-secret.yaml');
    await writeFile(
      file,
      `version: 1
name: needs-secret
on: { callback: { service: DeviceUsage } }
steps:
  - id: tell
    uses: notify.webhook
    with: { url: '\${{ secrets.ONCALL_WEBHOOK }}', body: { text: hi } }
`,
    );
    const r = await fleetbook(['run', file], env);
    expect(r.code).to.equal(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).to.have.length(2);
    expect(lines[0]).to.match(
      /^fleetbook: playbook needs-secret runs on a callback \(DeviceUsage\): give it an event/,
    );
    expect(lines[1]).to.match(/^fleetbook: playbook needs-secret .*ONCALL_WEBHOOK/);
  });

  it('says to pass an array input as JSON', async () => {
    const r = await fleetbook(
      ['run', join(PLAYBOOKS, 'onboard-managed-accounts.yaml'), '--input', 'accounts=0000123456-00002'],
      env,
    );
    expect(r.code).to.equal(2);
    expect(r.stderr).to.include(
      `input \`accounts\` is an array: pass it as JSON, e.g. --input 'accounts=["a","b"]' (got "0000123456-00002")`,
    );
  });

  it('says so too of text that is JSON but no array or object: one id, a number, a quoted string', async () => {
    for (const [given, got] of [
      ['350260700638360', '350260700638360'],
      ['"0000123456-00002"', '"0000123456-00002"'],
      ['{"a":1}', '{"a":1}'],
    ]) {
      const r = await fleetbook(
        ['run', join(PLAYBOOKS, 'onboard-managed-accounts.yaml'), '--input', `accounts=${given}`],
        env,
      );
      expect([r.code, r.stderr]).to.deep.equal([
        2,
        `fleetbook: input \`accounts\` is an array: pass it as JSON, e.g. --input 'accounts=["a","b"]' (got ${got})\n`,
      ]);
    }
  });
});
