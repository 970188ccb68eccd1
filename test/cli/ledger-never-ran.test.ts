/**
 * A `ledger.query` of a playbook that never ran (a misspelt name: `my-nigthly`): the run says so in the step's
 * note (`fleetbook run`, `runs show`, the console's run page) and logs one warning, rather than an empty result
 * no one reads, and a forEach over its items skipped for having none. A playbook that ran and recorded no
 * matching device is normal: neither. The built binary in a child process, against the embedded emulator, on a
 * SQLite state file of its own (dist/ must be built; `npm test` builds it).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { fleetbook } from '../helpers/cli.js';
import { stepLines } from '../helpers/step-lines.js';
import { tempDir } from '../helpers/temp.js';

const NIGHTLY = `
version: 1
name: my-nightly
on: { manual: true }
steps:
  - id: report
    uses: log
    with: { message: the nightly ran }
`;

/** The morning retry of the nightly's misses, by the name given: two queries of it, then the devices again. */
const morning = (name: string, queried: string) => `
version: 1
name: ${name}
on: { manual: true }
steps:
  - id: missed
    uses: ledger.query
    with: { playbook: ${queried}, step: report, error: SVC CACHE UNAVAILABLE }
  - id: absent
    uses: ledger.query
    with: { playbook: ${queried}, step: report, error: ABSENT SUBSCRIBER }
  - id: each
    forEach:
      items: "\${{ steps.missed.items }}"
      steps:
        - id: again
          uses: devices.restore
          with: { accountName: "0000123456-00001", devices: "\${{ [item] }}" }
`;

const NEVER_RAN =
  'no run of playbook `my-nigthly` in the store: the query found no device (is the name right? has it run?)';

interface LogLine {
  level: string;
  message: string;
  [k: string]: unknown;
}
const logLines = (stderr: string): LogLine[] =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);

describe('fleetbook run and runs show: a ledger.query of a playbook that never ran (child process)', function () {
  this.timeout(60_000);
  let tmp: string;
  let env: Record<string, string>;

  before(async () => {
    tmp = tempDir('fleetbook-ledger-never-ran-');
    env = { FLEETBOOK_STATE: join(tmp, 'state.db'), FLEETBOOK_LOG_LEVEL: 'info' };
    await writeFile(join(tmp, 'nightly.yaml'), NIGHTLY);
    await writeFile(join(tmp, 'misspelt.yaml'), morning('morning-misspelt', 'my-nigthly'));
    await writeFile(join(tmp, 'morning.yaml'), morning('morning', 'my-nightly'));
  });

  const said = (out: string) => stepLines(out).map(([id, status, , rest]) => [id, status, rest]);

  it('says in each query step that the playbook has no run, and warns once', async () => {
    const r = await fleetbook(['run', join(tmp, 'misspelt.yaml')], env);
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).to.match(/^run \S+ of morning-misspelt: succeeded$/);
    expect(said(r.stdout)).to.deep.include.members([
      ['  missed', 'succeeded', `(${NEVER_RAN})`],
      ['  absent', 'succeeded', `(${NEVER_RAN})`],
    ]);
    const warned = logLines(r.stderr).filter((l) => l.level === 'warn');
    expect(warned.map((l) => l.message)).to.deep.equal([`ledger.query: ${NEVER_RAN}`]);
    expect(warned[0]).to.include({ step: 'missed', queried: 'my-nigthly' });
    expect(logLines(r.stderr).find((l) => l.message === 'step ended' && l.step === 'missed')).to.include({
      note: NEVER_RAN,
    });

    const runId = /^run (\S+) of/.exec(lines[0]!)![1]!;
    const shown = await fleetbook(['runs', 'show', runId], env);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(said(shown.stdout)).to.deep.include.members([
      ['  missed', 'succeeded', `(${NEVER_RAN})`],
      ['  absent', 'succeeded', `(${NEVER_RAN})`],
    ]);
    const json = await fleetbook(['runs', 'show', runId, '--json'], env);
    const s = JSON.parse(json.stdout) as RunSummary;
    expect(s.steps.find((x) => x.id === 'missed')).to.include({ status: 'succeeded', note: NEVER_RAN });
  });

  it('says nothing of a playbook that ran and recorded no matching device', async () => {
    const night = await fleetbook(['run', join(tmp, 'nightly.yaml')], env);
    expect(night.code, night.stderr).to.equal(0);
    const r = await fleetbook(['run', join(tmp, 'morning.yaml')], env);
    expect(r.code, r.stderr).to.equal(0);
    expect(said(r.stdout)).to.deep.include.members([
      ['  missed', 'succeeded', ''],
      ['  absent', 'succeeded', ''],
    ]);
    expect(logLines(r.stderr).filter((l) => l.level === 'warn')).to.deep.equal([]);
    // Its own earlier runs count too: a playbook that queries itself, run a second time, is not warned of.
    await writeFile(join(tmp, 'self.yaml'), morning('self', 'self'));
    const first = await fleetbook(['run', join(tmp, 'self.yaml')], env);
    expect(said(first.stdout)[0]![2]).to.match(/^\(no run of playbook `self` in the store/);
    const second = await fleetbook(['run', join(tmp, 'self.yaml')], env);
    expect(said(second.stdout)[0]).to.deep.equal(['  missed', 'succeeded', '']);
  });
});
