/**
 * `report.write` wrote wherever a playbook said: an absolute path, a `../../` path, a path built from an
 * input. It now writes only inside the reports directory (FLEETBOOK_REPORTS_DIR, default ./reports), and a
 * step's `path` is relative to it. A literal path outside it is a `validate` error at its line and column; a
 * computed one fails its step, naming the path and the directory; a symbolic link cannot lead outside.
 *
 * Real files in a temp directory, the real runner and the emulator. The CLI test spawns `bin/fleetbook.js`,
 * which runs the compiled dist/ (build first when running this file alone).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { engineSettings, type EngineSettings } from '../../src/actions/settings.js';
import type { Clock } from '../../src/clock.js';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import type { RunSummary } from '../../src/store/store.js';
import { BIN } from '../helpers/cli.js';
import { captureLogger, clientFor, emulator, memoryStore, playbook, type LogLine } from './helpers.js';
import { tempDir } from '../helpers/temp.js';

/** One report.write step to `path` (YAML text, quoted or not). */
const writing = (path: string) => `
version: 1
name: write-report
on: { manual: true }
inputs:
  path: { type: string, default: x.csv }
steps:
  - id: out
    uses: report.write
    with: { path: ${path}, format: csv }
`;

describe('report.write writes only inside the reports directory', function () {
  this.timeout(30_000);
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let tmp: string;
  /** The reports directory of the runs (not made yet: the first report makes it). */
  let reports: string;
  /** A directory beside it, which no report may reach. */
  let outside: string;
  let engine: EngineSettings;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 5 });
    client = clientFor(emu);
    store = memoryStore();
  });
  after(async () => {
    await store.close();
    await client.close();
    await emu.close();
  });
  beforeEach(async () => {
    tmp = tempDir('fleetbook-report-path-escape-');
    reports = join(tmp, 'reports');
    outside = join(tmp, 'outside');
    await mkdir(outside);
    engine = engineSettings({ reportsDir: reports });
  });

  const run = (yaml: string, inputs: Record<string, unknown> = {}): Promise<RunSummary> =>
    runPlaybook(playbook(yaml), { client, store, inputs, engine });

  describe('fleetbook validate: a literal path outside it is an error at its line and column', () => {
    const diagnostics = (path: string) =>
      loadPlaybook(writing(path), 'w.yaml').diagnostics.map(
        (d) => `${d.line}:${d.column} ${d.severity} [${d.rule}] ${d.message}`,
      );

    it('an absolute path', () => {
      expect(diagnostics('/etc/cron.d/fleetbook')).to.deep.equal([
        '10:19 error [report-path] report.write: path "/etc/cron.d/fleetbook" is absolute: a report path is relative to the reports directory (FLEETBOOK_REPORTS_DIR, default ./reports)',
      ]);
    });

    it('a ../../ path, and one that climbs after going down', () => {
      expect(diagnostics('../../.bashrc')).to.deep.equal([
        '10:19 error [report-path] report.write: path "../../.bashrc" climbs out of the reports directory with .. (FLEETBOOK_REPORTS_DIR, default ./reports)',
      ]);
      expect(diagnostics('"daily/../../x.csv"')).to.have.length(1);
    });

    it('a computed path whose literal start is outside: /tmp/${{ ... }}, ../${{ ... }}', () => {
      expect(diagnostics('"/tmp/${{ run.id }}.csv"')).to.have.length(1);
      expect(diagnostics('"../${{ run.id }}.csv"')).to.have.length(1);
      // What follows an expression is known at run time only.
      expect(diagnostics('"${{ inputs.path }}"')).to.deep.equal([]);
      expect(diagnostics('"daily/${{ run.date }}.csv"')).to.deep.equal([]);
    });

    it('a path written for the old rule (reports/...) is a warning', () => {
      expect(diagnostics('"reports/${{ run.date }}.csv"')).to.deep.equal([
        '10:19 warning [report-path] report.write: path "reports/${{ run.date }}.csv" starts with reports/, but it is relative to the reports directory (FLEETBOOK_REPORTS_DIR, default ./reports): with the default it writes to ./reports/reports/ (drop the prefix)',
      ]);
    });
  });

  describe('run time', () => {
    it('a path is relative to the reports directory, which is made with the directories the path needs', async () => {
      const lines: LogLine[] = [];
      const yaml = `${writing('"daily/${{ run.date }}/x.csv"')}  - id: said
    uses: log
    with: { message: "\${{ steps.out.output.path }} \${{ steps.out.output.file }}" }
`;
      const s = await runPlaybook(playbook(yaml), { client, store, engine, logger: captureLogger(lines) });
      expect(s.status, s.error).to.equal('succeeded');
      const file = join(reports, 'daily', s.startedAt.slice(0, 10), 'x.csv');
      expect(await readFile(file, 'utf8')).to.match(/^runId,step,deviceId/);
      // The step's output: the path as written, and the file it names.
      expect(lines.map((l) => l.message)).to.include(`daily/${s.startedAt.slice(0, 10)}/x.csv ${file}`);
    });

    it('a path computed from an input: absolute, or climbing with ../../, fails the step naming both', async () => {
      for (const path of [join(outside, 'evil.csv'), '../outside/evil.csv', 'a/../../outside/evil.csv']) {
        const s = await run(writing('${{ inputs.path }}'), { path });
        expect(s.status).to.equal('failed');
        expect(s.error).to.include(`report.write: path ${JSON.stringify(path)}`);
        expect(s.error).to.include(`reports are written only inside ${reports} (FLEETBOOK_REPORTS_DIR)`);
        expect(existsSync(join(outside, 'evil.csv')), path).to.equal(false);
      }
    });

    it('a directory that is a symbolic link to outside is refused, and nothing is written there', async () => {
      await mkdir(reports);
      await symlink(outside, join(reports, 'shared'));
      const s = await run(writing('shared/x.csv'));
      expect(s.status).to.equal('failed');
      expect(s.error).to.include(
        `path "shared/x.csv" leads through the symbolic link ${join(reports, 'shared')} to ${outside}, outside the reports directory`,
      );
      expect(existsSync(join(outside, 'x.csv'))).to.equal(false);
    });

    it('a symbolic link at the file name is never written through', async () => {
      await mkdir(reports);
      const target = join(outside, 'passwd');
      await writeFile(target, 'keep\n');
      await symlink(target, join(reports, 'x.csv'));
      const s = await run(writing('x.csv'));
      expect(s.status).to.equal('failed');
      expect(s.error).to.include('path "x.csv" is a symbolic link');
      expect(await readFile(target, 'utf8')).to.equal('keep\n');
    });

    it('links that stay inside are followed, and the reports directory may itself be a link', async () => {
      const real = join(tmp, 'real-reports');
      await mkdir(join(real, '2026'), { recursive: true });
      await symlink(real, reports);
      await symlink(join(real, '2026'), join(real, 'latest'));
      const s = await run(writing('latest/x.csv'));
      expect(s.status, s.error).to.equal('succeeded');
      expect(existsSync(join(real, '2026', 'x.csv'))).to.equal(true);
    });

    it('a refused path is not retried, whatever retry.on says', async () => {
      let sleeps = 0;
      const clock: Clock = {
        now: () => Date.now(),
        sleep: () => Promise.resolve(void sleeps++),
        timer: (_ms, fire) => {
          const t = setImmediate(fire);
          return () => clearImmediate(t);
        },
      };
      const yaml = `${writing('${{ inputs.path }}')}    retry: { on: [retryable, network], maxAttempts: 3, delay: 1s }\n`;
      const s = await runPlaybook(playbook(yaml), {
        client,
        store,
        engine,
        clock,
        inputs: { path: '/tmp/x.csv' },
      });
      expect(s.status).to.equal('failed');
      expect(s.error).to.include('is absolute');
      expect(sleeps, 'retries').to.equal(0);
    });
  });

  it('fleetbook run: FLEETBOOK_REPORTS_DIR is where reports go, from any working directory', async () => {
    const file = join(tmp, 'p.yaml');
    await writeFile(file, writing('nightly/x.csv'));
    const elsewhere = join(tmp, 'elsewhere');
    await mkdir(elsewhere);
    const env = {
      PATH: process.env.PATH ?? '',
      FLEETBOOK_STATE: join(tmp, 'state.db'),
      FLEETBOOK_REPORTS_DIR: reports,
      FLEETBOOK_LOG_LEVEL: 'warn',
    };
    const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        [BIN, 'run', file],
        { cwd: elsewhere, env, timeout: 30_000 },
        (err, _o, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr }),
      ),
    );
    expect(r.code, r.stderr).to.equal(0);
    expect(existsSync(join(reports, 'nightly', 'x.csv'))).to.equal(true);
    expect(existsSync(join(elsewhere, 'reports'))).to.equal(false);
  });
});
