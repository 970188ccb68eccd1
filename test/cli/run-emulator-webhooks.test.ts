/**
 * `fleetbook run` on its embedded emulator (no FLEETBOOK_API_URL) posted a playbook's webhooks to wherever the
 * environment pointed them: an on-call channel, paged about devices that do not exist. They are now held back
 * there unless FLEETBOOK_EMULATOR_WEBHOOKS=send; against a service (FLEETBOOK_API_URL) nothing changes.
 *
 * The built binary in a child process (dist/ must be built; `npm test` builds it), a receiver over real loopback
 * HTTP standing for the channel, allowed by FLEETBOOK_WEBHOOK_ALLOW so that it receives whatever is sent.
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { RunSummary } from '../../src/store/store.js';
import { BIN, emulatorEnv, fleetbook } from '../helpers/cli.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/temp.js';

const PAGE = `
version: 1
name: page-oncall
on: { manual: true }
steps:
  - id: tell
    uses: notify.webhook
    with:
      url: \${{ secrets.ONCALL_WEBHOOK }}
      body: { text: 'Suspended 3 devices' }
`;

/** The same page to \`env.TEAM_HOOK\`, a variable of the environment. */
const PAGE_ENV = PAGE.replace('page-oncall', 'page-team').replace('secrets.ONCALL_WEBHOOK', 'env.TEAM_HOOK');

const NOTICE =
  'webhooks are held back on the embedded emulator: notify.webhook sends nothing (secrets.ONCALL_WEBHOOK is set to a URL); FLEETBOOK_EMULATOR_WEBHOOKS=send sends them';
const HELD = (host: string) =>
  `notify.webhook: not sent to ${host}: fleetbook is on its embedded emulator (no FLEETBOOK_API_URL), whose events are made up, and holds webhooks back so as not to page a real channel; FLEETBOOK_EMULATOR_WEBHOOKS=send sends them`;

/** The log lines of stderr (JSON, off a terminal). */
const logs = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('fleetbook run on the embedded emulator: webhooks held back unless asked', function () {
  this.timeout(60_000);
  let tmp: string;
  let receiver: Receiver;
  let file: string;
  let env: Record<string, string>;

  before(async () => {
    tmp = tempDir('fleetbook-run-emulator-webhooks-');
    receiver = await startReceiver();
    file = join(tmp, 'page.yaml');
    await writeFile(file, PAGE);
    await writeFile(join(tmp, 'page-env.yaml'), PAGE_ENV);
    env = {
      FLEETBOOK_STATE: join(tmp, 'state.db'),
      FLEETBOOK_SECRET_ONCALL_WEBHOOK: receiver.url,
      FLEETBOOK_WEBHOOK_ALLOW: '127.0.0.1',
    };
  });
  beforeEach(() => receiver.bodies.splice(0));
  after(async () => {
    await receiver?.close();
  });

  it('sends nothing: the step fails naming the host, why and how to send; the start says so', async () => {
    const r = await fleetbook(['run', file, '--json'], env);
    expect(receiver.bodies, 'posts the channel received').to.deep.equal([]);
    expect(r.code, r.stderr).to.equal(1);
    const s = JSON.parse(r.stdout) as RunSummary;
    expect(s.status).to.equal('failed');
    const tell = s.steps.find((x) => x.id === 'tell')!;
    expect([tell.status, tell.error, tell.attempts]).to.deep.equal(['failed', HELD('127.0.0.1'), 1]);
    const notices = logs(r.stderr).filter((l) => String(l.message).startsWith('webhooks are held back'));
    expect(notices.map((l) => [l.level, l.message])).to.deep.equal([['info', NOTICE]]);
    // `runs show` says it as the run did.
    const shown = await fleetbook(['runs', 'show', s.runId], env);
    expect(shown.stdout).to.include(HELD('127.0.0.1'));
  });

  it('a loopback URL not allowed: the one message names both settings it needs', async () => {
    const { FLEETBOOK_WEBHOOK_ALLOW: _allow, ...notAllowed } = env;
    for (const host of ['127.0.0.1', 'localhost']) {
      const url = receiver.url.replace('127.0.0.1', host);
      const r = await fleetbook(['run', file, '--json'], {
        ...notAllowed,
        FLEETBOOK_SECRET_ONCALL_WEBHOOK: url,
      });
      expect(r.code, r.stderr).to.equal(1);
      const tell = (JSON.parse(r.stdout) as RunSummary).steps.find((x) => x.id === 'tell')!;
      expect(tell.error).to.equal(
        `${HELD(host)} (${host} is a loopback address: it also needs FLEETBOOK_WEBHOOK_ALLOW)`,
      );
    }
    expect(receiver.bodies).to.deep.equal([]);
  });

  it('a variable of the environment set to a URL is named at the start the same way', async () => {
    const { FLEETBOOK_SECRET_ONCALL_WEBHOOK: _secret, ...rest } = env;
    const r = await fleetbook(['run', join(tmp, 'page-env.yaml'), '--json'], {
      ...rest,
      TEAM_HOOK: receiver.url,
    });
    expect(r.code, r.stderr).to.equal(1);
    expect(receiver.bodies).to.deep.equal([]);
    expect(logs(r.stderr).map((l) => l.message)).to.include(
      NOTICE.replace('secrets.ONCALL_WEBHOOK', 'env.TEAM_HOOK'),
    );
  });

  it('FLEETBOOK_EMULATOR_WEBHOOKS=send sends it, with no notice', async () => {
    const r = await fleetbook(['run', file, '--json'], { ...env, FLEETBOOK_EMULATOR_WEBHOOKS: 'send' });
    expect(r.code, r.stderr).to.equal(0);
    expect(receiver.bodies).to.deep.equal([{ text: 'Suspended 3 devices' }]);
    expect(r.stderr).to.not.include('held back');
    expect(r.stderr).to.not.include('reads no such variable');
  });

  it('on a terminal, where info lines are not shown, the notice is', async () => {
    const out = await onTerminal(['run', file], env);
    expect(receiver.bodies).to.deep.equal([]);
    expect(out).to.include(`fleetbook: ${NOTICE}`);
  });

  describe('against a service (FLEETBOOK_API_URL)', () => {
    let emu: Emulator;
    before(async () => (emu = await startEmulator({ timeScale: 0 })));
    after(() => emu?.close());

    it('sends as before: nothing is held back, nothing said', async () => {
      const r = await fleetbook(['run', file, '--json'], { ...env, ...emulatorEnv(emu) });
      expect(r.code, r.stderr).to.equal(0);
      expect(receiver.bodies).to.deep.equal([{ text: 'Suspended 3 devices' }]);
      expect(r.stderr).to.not.include('held back');
    });
  });
});

/** `fleetbook ARGS` on a pseudo-terminal (util-linux `script`); its output, escapes removed. */
function onTerminal(args: string[], env: Record<string, string>): Promise<string> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    execFile(
      'script',
      ['-qec', command, '/dev/null'],
      { env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...env }, timeout: 60_000 },
      (err, stdout) => {
        if (err && typeof err.code !== 'number')
          reject(new Error(`script (util-linux) could not run the command: ${err.message}`));
        // eslint-disable-next-line no-control-regex
        else resolve(stdout.replace(/\u001b\[[0-9;?]*[A-Za-z]|\u001b[78]/g, '').replace(/\r/g, ''));
      },
    );
  });
}
