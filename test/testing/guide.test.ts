/**
 * docs/testing.md stays true: its playbook and test file, written out as a new user would save them, validate
 * and pass `fleetbook test` with the output the guide shows, and the failures it shows are the ones printed. Its
 * other examples, a scheduled case of the nightly report and the `before` of a shipped test, pass too.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { yamlBlocks } from '../helpers/markdown.js';

const GUIDE = join(import.meta.dirname, '..', '..', 'docs', 'testing.md');
const TEST = 'playbooks/overuse-suspend-notify.test.yaml';
const SHIPPED = join(import.meta.dirname, '..', '..', 'playbooks');

/** The guide's fenced blocks: `yaml file=NAME` ones by name, the others in order. */
async function blocks(): Promise<{ files: Map<string, string>; plain: string[] }> {
  const text = await readFile(GUIDE, 'utf8');
  const files = new Map<string, string>();
  const plain: string[] = [];
  for (const m of text.matchAll(/```(\S*)(?: file=(\S+))?\n([\s\S]*?)```/g)) {
    if (m[2]) files.set(m[2], m[3] as string);
    else plain.push(m[3] as string);
  }
  return { files, plain };
}

describe('docs/testing.md', () => {
  let dir: string;
  let files: Map<string, string>;
  let plain: string[];
  before(async () => {
    ({ files, plain } = await blocks());
    dir = await mkdtemp(join(tmpdir(), 'fleetbook-guide-'));
    await mkdir(join(dir, 'playbooks'));
    for (const [name, body] of files) await writeFile(join(dir, 'playbooks', name), body);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const run = (args: string[]) => fleetbook(args, {}, [], dir);

  it("has a playbook that validates, and tests that pass with the guide's output", async function () {
    this.timeout(60_000);
    expect([...files.keys()]).to.deep.equal([
      'overuse-suspend-notify.yaml',
      'overuse-suspend-notify.test.yaml',
    ]);
    const v = await run(['validate', 'playbooks/overuse-suspend-notify.yaml']);
    expect(v.code, v.stdout + v.stderr).to.equal(0);
    const r = await run(['test', TEST]);
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    expect(plain, 'the output block of "Run it"').to.include(r.stdout);
  });

  it('shows what `fleetbook run` says of the event run while the secret is unset', async function () {
    this.timeout(60_000);
    await writeFile(join(dir, 'overuse.json'), plain[0] as string);
    const r = await run(['run', 'playbooks/overuse-suspend-notify.yaml', '--event', 'overuse.json']);
    expect(r.code, r.stderr).to.equal(2);
    expect(plain, 'the refusal the guide shows').to.include(r.stderr);
  });

  /** `fleetbook test` of the guide's test file with line `n` (1-based), which reads `was`, changed to `now`. */
  async function testWithLine(n: number, was: string, now: string) {
    const lines = (files.get('overuse-suspend-notify.test.yaml') as string).split('\n');
    expect(lines[n - 1]).to.equal(was);
    lines[n - 1] = now;
    await writeFile(join(dir, TEST), lines.join('\n'));
    const r = await run(['test', TEST]);
    expect(r.code).to.equal(1);
    return r.stdout;
  }

  it('shows the failure a wrong expectation prints, at its line', async function () {
    this.timeout(60_000);
    const out = await testWithLine(
      40,
      "        '350260700638378': suspend",
      "        '350260700638378': active",
    );
    expect(out).to.include(plain.find((b) => b.startsWith('FAIL ')) as string);
    expect(out.trimEnd().split('\n').at(-1)).to.equal('3 passed, 1 failed');
  });

  it('shows the error a misspelt key in a test file prints', async function () {
    this.timeout(60_000);
    const out = await testWithLine(28, '      status: succeeded', '      stauts: succeeded');
    expect(out).to.include((plain.find((b) => b.includes('`stauts`')) as string).trimEnd());
  });

  it('runs every test under playbooks/ with no path, and the CI line passes', async function () {
    this.timeout(60_000);
    // A directory of its own: the other tests rewrite the test file, and add others.
    const own = await mkdtemp(join(tmpdir(), 'fleetbook-guide-all-'));
    await mkdir(join(own, 'playbooks'));
    for (const [name, body] of files) await writeFile(join(own, 'playbooks', name), body);
    const r = await fleetbook(['test'], {}, [], own);
    const v = await fleetbook(['validate', 'playbooks/'], {}, [], own);
    await rm(own, { recursive: true, force: true });
    expect([r.code, r.stdout]).to.deep.equal([0, plain.find((b) => b.startsWith('ok ')) as string]);
    expect([v.code, v.stdout + v.stderr]).to.deep.equal([0, '1 playbook checked: 0 errors, 0 warnings\n']);
  });

  it('says a callback playbook run without --event needs one, and exits 2 when there is nothing to test', async () => {
    const r = await run(['run', 'playbooks/overuse-suspend-notify.yaml']);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.include('runs on a callback (DeviceUsage): give it an event (`--event FILE`');
    const empty = await mkdtemp(join(tmpdir(), 'fleetbook-guide-empty-'));
    const none = await fleetbook(['test'], {}, [], empty);
    await rm(empty, { recursive: true, force: true });
    expect(none.code).to.equal(2);
  });

  /** The plain yaml blocks of the guide, in order: Scheduled runs', Earlier runs', What a step gave's, items'. */
  const plainYaml = async () => {
    const found = yamlBlocks(await readFile(GUIDE, 'utf8'));
    expect(found, 'the plain yaml blocks of the guide: each needs its check here').to.have.length(4);
    return found.map((b) => b.text);
  };

  it('shows a scheduled case of the nightly report, which passes as a test file', async function () {
    this.timeout(60_000);
    const text = (await plainYaml())[0] as string;
    expect(text).to.include("schedule: { at: '2026-11-30T02:00:00-05:00' }");
    const own = await mkdtemp(join(tmpdir(), 'fleetbook-guide-schedule-'));
    await mkdir(join(own, 'playbooks'));
    await copyFile(
      join(SHIPPED, 'nightly-location-report.yaml'),
      join(own, 'playbooks', 'nightly-location-report.yaml'),
    );
    await writeFile(join(own, 'playbooks', 'nightly-location-report.test.yaml'), text);
    const r = await fleetbook(['test'], {}, [], own);
    await rm(own, { recursive: true, force: true });
    expect([r.code, r.stdout.trimEnd().split('\n').at(-1)], r.stdout).to.deep.equal([
      0,
      '1 passed, 0 failed',
    ]);
  });

  describe('What a step gave', () => {
    const GUC = 'playbooks/group-usage-check.test.yaml';
    const shipped = () => readFile(join(SHIPPED, 'group-usage-check.test.yaml'), 'utf8');
    const copyPlaybook = () =>
      copyFile(join(SHIPPED, 'group-usage-check.yaml'), join(dir, 'playbooks', 'group-usage-check.yaml'));

    it('is the first case of group-usage-check.test.yaml, and passes as a test file', async function () {
      this.timeout(60_000);
      const text = (await plainYaml())[2] as string;
      expect(await shipped()).to.include(text);
      await copyPlaybook();
      await writeFile(join(dir, GUC), text);
      const r = await run(['test', GUC]);
      expect([r.code, r.stdout.trimEnd().split('\n').at(-1)], r.stdout).to.deep.equal([
        0,
        '1 passed, 0 failed',
      ]);
    });

    it('shows the failure of an output that does not match, where it differs', async function () {
      this.timeout(60_000);
      await copyPlaybook();
      const warned = '- message: device 350260700638444 used';
      const text = (await shipped()).replace(warned, warned.replace('444', '445'));
      await writeFile(join(dir, GUC), text);
      const r = await run(['test', GUC]);
      expect(r.code).to.equal(1);
      const shown = plain.find((b) => b.includes('the output of step over')) as string;
      expect(r.stdout.split('\n').slice(0, 2).join('\n')).to.equal(shown.trimEnd());
    });
  });

  describe('Earlier runs', () => {
    const example = async () => (await plainYaml())[1] as string;
    const shipped = () => readFile(join(SHIPPED, 'retry-location-misses.test.yaml'), 'utf8');
    const copyPlaybooks = () =>
      Promise.all(
        ['retry-location-misses.yaml', 'nightly-location-report.yaml'].map((f) =>
          copyFile(join(SHIPPED, f), join(dir, 'playbooks', f)),
        ),
      );
    const RLM = 'playbooks/retry-location-misses.test.yaml';

    it('is the first case of retry-location-misses.test.yaml, and passes as a test file', async function () {
      this.timeout(60_000);
      const text = await example();
      const lines = (await shipped()).split('\n');
      let at = 0;
      for (const line of text.trimEnd().split('\n').slice(1)) {
        at = lines.indexOf(line, at) + 1;
        expect(at, `a line of the shipped test: ${line}`).to.be.greaterThan(0);
      }
      await copyPlaybooks();
      await writeFile(join(dir, RLM), text);
      const r = await run(['test', RLM]);
      expect([r.code, r.stdout.trimEnd().split('\n').at(-1)]).to.deep.equal([0, '1 passed, 0 failed']);
    });

    it('shows the failure of an earlier run that fails', async function () {
      this.timeout(60_000);
      await copyPlaybooks();
      const before = '      - playbook: nightly-location-report.yaml\n';
      const text = (await shipped()).replace(
        before,
        `${before}        inputs: { account: '0000999999-00001' }\n`,
      );
      await writeFile(join(dir, RLM), text);
      const r = await run(['test', RLM]);
      expect(r.code).to.equal(1);
      const shown = plain.find((b) => b.includes('earlier run 1')) as string;
      expect(r.stdout.split('\n').slice(0, 2).join('\n')).to.equal(shown.trimEnd());
    });
  });

  describe("Each device's result", () => {
    const SOO = 'playbooks/suspend-on-overuse.test.yaml';
    const shipped = () => readFile(join(SHIPPED, 'suspend-on-overuse.test.yaml'), 'utf8');
    const copyPlaybook = () =>
      copyFile(join(SHIPPED, 'suspend-on-overuse.yaml'), join(dir, 'playbooks', 'suspend-on-overuse.yaml'));

    it('is of the second case of suspend-on-overuse.test.yaml, its lines in order', async () => {
      const text = (await plainYaml())[3] as string;
      const lines = (await shipped()).split('\n');
      let at = 0;
      for (const line of text.trimEnd().split('\n').slice(1)) {
        at = lines.indexOf(line, at) + 1;
        expect(at, `a line of the shipped test: ${line}`).to.be.greaterThan(0);
      }
    });

    it('shows the failure of an item that does not match, at its line', async function () {
      this.timeout(60_000);
      await copyPlaybook();
      const item = "'350260700638410': { outcome: failed, error: STATE NOT CHANGED }";
      const text = (await shipped()).replace(item, item.replace('STATE NOT CHANGED', 'INVALID DEVICE STATE'));
      await writeFile(join(dir, SOO), text);
      const r = await run(['test', SOO]);
      expect(r.code).to.equal(1);
      const shown = plain.find((b) => b.includes('the items of step suspend')) as string;
      const failed = r.stdout.split('\n').filter((l) => l.startsWith('FAIL') || l.startsWith('    '));
      expect(failed.join('\n')).to.equal(shown.trimEnd());
    });
  });
});
