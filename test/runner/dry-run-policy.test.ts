/**
 * A dry run refuses what the real run's policies refuse, with the real run's error: a webhook to an address
 * FLEETBOOK_WEBHOOK_ALLOW does not allow (an address in the URL, or a name that resolves to one), and a report
 * path outside the reports directory (an absolute path rendered from an input, a directory that is a symbolic
 * link to elsewhere). Both passed the dry run as `planned` and failed the real run with FB_REFUSED. The dry run
 * sends nothing and writes nothing, not even a directory of a path it accepts.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { engineSettings } from '../../src/actions/settings.js';
import { onEmulator, runLogged, stepOf } from './helpers.js';
import { hookAndDir } from './outside.js';

describe('runner: a dry run refuses what the webhook and report policies refuse', function () {
  this.timeout(30_000);
  const t = onEmulator();
  const out = hookAndDir();
  let reports: string;
  let outside: string;

  before(() => {
    reports = join(out.dir, 'reports');
    outside = join(out.dir, 'elsewhere');
    mkdirSync(reports);
    mkdirSync(outside);
    symlinkSync(outside, join(reports, 'out'));
  });

  /** No allowlist: the loopback receiver is not public. */
  const engine = (webhookAllow: string[] = []) => engineSettings({ reportsDir: reports, webhookAllow });

  /** `yaml` run dry then for real: both fail at step `bad` with the same FB_REFUSED error; nothing left the dry run. */
  async function refusedAlike(yaml: string, inputs: Record<string, unknown>, problem: RegExp) {
    const dry = await runLogged(t, yaml, { dryRun: true, inputs, engine: engine() });
    expect(out.hook.bodies.length, 'requests the hook received from the dry run').to.equal(0);
    expect(readdirSync(outside), 'files the dry run wrote').to.deep.equal([]);
    expect(readdirSync(reports), 'files the dry run wrote').to.deep.equal(['out']);

    const real = await runLogged(t, yaml, { inputs, engine: engine() });
    expect(real.s.status).to.equal('failed');
    expect(real.s.error).to.match(problem);
    expect(dry.s.status, 'the dry run').to.equal('failed');
    expect(dry.s.error, 'the dry run').to.equal(real.s.error);
    const step = stepOf(dry.s, 'bad');
    expect(step.status).to.equal('failed');
    expect(step.error).to.match(/FLEETBOOK_(WEBHOOK_ALLOW|REPORTS_DIR)/);
    expect(dry.s.planned ?? [], 'calls planned').to.deep.equal([]);
    expect(stepOf(dry.s, 'after')?.status).to.equal(stepOf(real.s, 'after')?.status);
    expect(out.hook.bodies.length, 'requests the hook received').to.equal(0);
  }

  const webhook = (url: string) => `
version: 1
name: dry-refused-webhook
on: { manual: true }
inputs:
  host: { type: string, required: true }
steps:
  - id: bad
    uses: notify.webhook
    with: { url: "${url}", body: { text: hi } }
  - id: after
    uses: log
    with: { message: not reached }
`;

  it('fails a webhook to a loopback address not allowed, and posts nothing', async () => {
    await refusedAlike(
      webhook(`http://\${{ inputs.host }}:${out.hook.port}/hook`),
      { host: '127.0.0.1' },
      /^step `bad` failed: notify\.webhook: refused 127\.0\.0\.1: it is a loopback address; FLEETBOOK_WEBHOOK_ALLOW/,
    );
  });

  it('fails a webhook to a name that resolves to a loopback address, and posts nothing', async () => {
    await refusedAlike(
      webhook(`http://\${{ inputs.host }}:${out.hook.port}/hook`),
      { host: 'localhost' },
      /^step `bad` failed: notify\.webhook: refused localhost: it resolves to (127\.0\.0\.1|::1), a loopback address/,
    );
  });

  const report = `
version: 1
name: dry-refused-report
on: { manual: true }
inputs:
  path: { type: string, required: true }
steps:
  - id: bad
    uses: report.write
    with: { path: "\${{ inputs.path }}", rows: [{ a: 1 }] }
  - id: after
    uses: log
    with: { message: not reached }
`;

  it('fails a report to an absolute path, and writes nothing', async () => {
    const path = join(outside, 'x.csv');
    await refusedAlike(
      report,
      { path },
      /^step `bad` failed: report\.write: path ".*x\.csv" is absolute.*FLEETBOOK_REPORTS_DIR/,
    );
  });

  it('fails a report through a symbolic link out of the reports directory, and writes nothing', async () => {
    await refusedAlike(
      report,
      { path: 'out/x.csv' },
      /^step `bad` failed: report\.write: path "out\/x\.csv" leads through the symbolic link .* outside the reports directory/,
    );
  });

  it('still plans an allowed webhook and a report in new directories, and makes none of them', async () => {
    const { s } = await runLogged(
      t,
      `
version: 1
name: dry-allowed
on: { manual: true }
steps:
  - id: save
    uses: report.write
    with: { path: new/deeper/x.csv, rows: [{ a: 1 }] }
  - id: tell
    uses: notify.webhook
    with: { url: "http://127.0.0.1:${out.hook.port}/hook", body: { text: hi } }
`,
      { dryRun: true, engine: engine(['127.0.0.1']) },
    );
    expect(s.status, s.error).to.equal('succeeded');
    expect(s.planned?.map((p) => p.step)).to.deep.equal(['save', 'tell']);
    expect(out.hook.bodies.length).to.equal(0);
    expect(existsSync(join(reports, 'new')), 'a directory the dry run made').to.equal(false);
  });

  it('on the embedded emulator, looks nothing up, and judges only an address in the URL and localhost', async () => {
    const looked: string[] = [];
    const held = engineSettings({
      reportsDir: reports,
      embedded: true,
      lookup: ((host: string, _o: unknown, cb: (e: Error) => void) => {
        looked.push(host);
        cb(Object.assign(new Error('no lookups here'), { code: 'ENOTFOUND' }));
      }) as never,
    });
    const plan = (url: string) => `
version: 1
name: dry-held
on: { manual: true }
steps:
  - id: tell
    uses: notify.webhook
    with: { url: "${url}", body: { text: hi } }
`;
    const away = await runLogged(t, plan('https://hooks.example.com/page'), { dryRun: true, engine: held });
    expect(away.s.status, away.s.error).to.equal('succeeded');
    for (const host of ['127.0.0.1', 'localhost']) {
      const near = await runLogged(t, plan(`http://${host}:${out.hook.port}/hook`), {
        dryRun: true,
        engine: held,
      });
      expect(near.s.status).to.equal('failed');
      expect(near.s.error).to.match(
        new RegExp(
          `notify\\.webhook: refused ${host}: it (is|resolves to 127\\.0\\.0\\.1,) a loopback address`,
        ),
      );
    }
    expect(looked, 'DNS lookups on the emulator').to.deep.equal([]);
    expect(out.hook.bodies.length).to.equal(0);
  });
});
