/**
 * A dry run checks the arguments of what it plans as the real run checks them before it sends anything (the
 * input check of the API client and of the engine actions, FB_INPUT): it used to plan a suspend with an
 * account that is no account, a webhook with a method it does not take, a report with a path rendered to a
 * number, and say `succeeded`, where the real run failed. It fails where the real run would, and sends nothing.
 */
import { expect } from 'chai';
import { existsSync, readdirSync } from 'node:fs';
import { engineSettings } from '../../src/actions/settings.js';
import { calls, onEmulator, runLogged, stepOf } from './helpers.js';
import { hookAndDir } from './outside.js';

const MUTATING = ['devices.suspend', 'devices.restore', 'location.createReport'];

describe('runner: a dry run checks the arguments of the calls it plans', function () {
  this.timeout(30_000);
  const t = onEmulator();
  const out = hookAndDir();

  const engine = () => engineSettings({ reportsDir: out.dir, webhookAllow: ['127.0.0.1'] });

  /** `yaml` run for real and dry: both fail at step `bad` with the same FB_INPUT error; the dry one sent nothing. */
  async function failsAlike(yaml: string, inputs: Record<string, unknown>, problem: RegExp) {
    const before = await calls(t.emu);
    const dry = await runLogged(t, yaml, { dryRun: true, inputs, engine: engine() });
    const after = await calls(t.emu);
    for (const a of MUTATING)
      expect(after.actions[a] ?? 0, `${a} calls of the dry run`).to.equal(before.actions[a] ?? 0);
    expect(out.hook.bodies.length, 'requests the hook received').to.equal(0);
    expect(readdirSync(out.dir), 'reports the dry run wrote').to.deep.equal([]);

    const real = await runLogged(t, yaml, { inputs, engine: engine() });
    expect(real.s.status).to.equal('failed');
    expect(real.s.error).to.match(problem);
    expect(dry.s.status, 'the dry run').to.equal('failed');
    expect(dry.s.error, 'the dry run').to.equal(real.s.error);
    const step = stepOf(dry.s, 'bad');
    expect(step.status).to.equal('failed');
    expect(step.error).to.match(/invalid input/);
    expect(dry.s.planned ?? [], 'calls planned').to.deep.equal([]);
    // What comes after the failing step is not reached, as in the real run.
    expect(stepOf(dry.s, 'after')?.status).to.equal(stepOf(real.s, 'after')?.status);
  }

  it('fails a mutating call whose rendered arguments the action refuses, and sends none', async () => {
    await failsAlike(
      `
version: 1
name: dry-bad-suspend
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: bad
    uses: devices.suspend
    with: { accountName: "\${{ inputs.account }}", devices: [{ id: "353000000000006", kind: imei }] }
  - id: after
    uses: log
    with: { message: not reached }
`,
      { account: 'no-such-account' },
      /^step `bad` failed: devices\.suspend: invalid input.*accountName/s,
    );
  });

  it('fails a webhook whose rendered arguments notify.webhook refuses, and posts nothing', async () => {
    await failsAlike(
      `
version: 1
name: dry-bad-webhook
on: { manual: true }
inputs:
  method: { type: string, required: true }
steps:
  - id: bad
    uses: notify.webhook
    with: { url: "http://127.0.0.1:${out.hook.port}/hook", method: "\${{ inputs.method }}", body: { text: hi } }
  - id: after
    uses: log
    with: { message: not reached }
`,
      { method: 'GET' },
      /^step `bad` failed: notify\.webhook: invalid input.*method must be one of "POST", "PUT"/s,
    );
  });

  it('fails a report whose rendered arguments report.write refuses, and writes nothing', async () => {
    await failsAlike(
      `
version: 1
name: dry-bad-report
on: { manual: true }
inputs:
  format: { type: string, required: true }
steps:
  - id: bad
    uses: report.write
    with: { path: out.csv, format: "\${{ inputs.format }}", rows: [{ a: 1 }] }
  - id: after
    uses: log
    with: { message: not reached }
`,
      { format: 'xml' },
      /^step `bad` failed: report\.write: invalid input.*format must be one of "csv", "json"/s,
    );
    expect(existsSync(`${out.dir}/out.csv`)).to.equal(false);
  });

  it('still plans what passes the check, as before', async () => {
    const { s } = await runLogged(
      t,
      `
version: 1
name: dry-good
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: "${'${{ inputs.account }}'}", devices: [{ id: "353000000000006", kind: imei }] }
  - id: tell
    uses: notify.webhook
    with: { url: "http://127.0.0.1:${out.hook.port}/hook", body: { text: hi } }
inputs:
  account: { type: string, required: true }
`,
      { dryRun: true, inputs: { account: t.account }, engine: engine() },
    );
    expect(s.status, s.error).to.equal('succeeded');
    expect(s.planned?.map((p) => p.step)).to.deep.equal(['suspend', 'tell']);
    expect(out.hook.bodies.length).to.equal(0);
  });
});
