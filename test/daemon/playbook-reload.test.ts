/**
 * `fleetbook serve` takes the playbooks as they are on disk while it runs: a file edited, added or removed under
 * `--playbooks` (or a SIGHUP) has it validate the whole set as at start and swap it, or keep the set it has and
 * say why in one error line. Before, it read the playbooks once at start: an edit changed nothing until a
 * restart, and nothing said so; a SIGHUP killed the daemon.
 *
 * The built binary in a child process, on an emulator of this process, with the playbook files in a temporary
 * directory. Every wait is for what the daemon logs or answers, with a generous deadline.
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { DaemonWorld, readState, untilDaemons, type DaemonProcess } from '../helpers/daemon.js';

const TOKEN = 'reload-test-daemon-token-0123456789';
const USER = 'reload-listener';
const PASSWORD = 'reload-password';

type Json = Record<string, unknown>;

/** A playbook `name` that logs `message`, with the members of `on` given (flow style, e.g. `manual: true`). */
const playbook = (name: string, on: string, message: string) => `version: 1
name: ${name}
on: { ${on} }
steps:
  - id: say
    uses: log
    with: { message: '${message}' }
`;

/** A schedule that fires every second. */
const EVERY_SECOND = `schedule: { cron: '* * * * * *' }`;

describe('daemon: playbooks reloaded while it runs (child process)', function () {
  this.timeout(120_000);
  let world: DaemonWorld;
  before(async () => {
    world = await DaemonWorld.create('reload', { user: USER, password: PASSWORD });
  });
  after(() => world.close());

  /** A directory of playbooks and a state file of their own, for one test. */
  async function place(name: string): Promise<{ dir: string; state: string }> {
    const dir = join(world.dir, name);
    await mkdir(dir);
    return { dir, state: join(world.dir, `${name}.db`) };
  }

  const start = (name: string, dir: string, state: string, env: Record<string, string> = {}) =>
    world.start(name, dir, { state, env: { FLEETBOOK_DAEMON_TOKEN: TOKEN, ...env } });

  /** The JSON log lines of `d` whose message is `message`. */
  const lines = (d: DaemonProcess, message: string): Json[] => d.logs().filter((l) => l.message === message);

  /** Waits for the `n`th line `message` of `d` (1-based) and answers it. */
  const nth = (d: DaemonProcess, message: string, n: number, ms = 30_000): Promise<Json> =>
    untilDaemons([d], `log line ${n} "${message}"`, async () => lines(d, message)[n - 1], ms);

  /** Waits for a line of `d` for which `test` holds. */
  const logged = (d: DaemonProcess, what: string, test: (l: Json) => boolean): Promise<Json> =>
    untilDaemons([d], what, async () => d.logs().find(test));

  /** POST /playbooks/{name}/runs: the status and the body. */
  async function startRun(d: DaemonProcess, name: string): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${d.url}/playbooks/${name}/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{}',
    });
    return { status: res.status, body: (await res.json()) as Json };
  }

  /** Posts a DeviceUsage callback to `d`. */
  async function callback(d: DaemonProcess, requestId: string): Promise<void> {
    const res = await fetch(`${d.url}/callbacks/DeviceUsage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        username: USER,
        password: PASSWORD,
        requestId,
        deviceResponse: { alertServiceResponse: { accountName: '0000123456-00001' } },
      }),
    });
    expect(res.status).to.equal(200);
  }

  /** The runs a callback started, once the matcher has processed it. */
  async function runsOfCallback(d: DaemonProcess, requestId: string): Promise<{ playbook: string }[]> {
    const line = await logged(
      d,
      `callback ${requestId} processed`,
      (l) => l.message === 'callback processed' && l.requestId === requestId,
    );
    return line.runs as { playbook: string }[];
  }

  /** The scheduled runs of `playbook` in the state file: when each was due, why it fired, its version. */
  const scheduled = (state: string, playbook: string) =>
    readState(state, (db) =>
      (
        db.prepare('SELECT version, trigger_json FROM runs WHERE playbook = ?').all(playbook) as {
          version: string;
          trigger_json: string;
        }[]
      ).map((r) => {
        const t = JSON.parse(r.trigger_json) as { scheduledAt: string; reason: string };
        return { at: t.scheduledAt, reason: t.reason, version: r.version };
      }),
    );

  it('takes an edited trigger for the next callback and manual start, registering its service', async () => {
    const { dir, state } = await place('edited');
    const file = join(dir, 'edited.yaml');
    await writeFile(file, playbook('edited', 'manual: true', 'edited v1'));
    const account = world.emu.defaults.accounts[0] as string;
    const d = await start('daemon edited', dir, state, { FLEETBOOK_CALLBACK_ACCOUNTS: account });
    const before = await d.manualRun('edited', TOKEN);
    await callback(d, 'before-edit');
    expect(await runsOfCallback(d, 'before-edit')).to.deep.equal([]);

    await writeFile(
      file,
      playbook('edited', 'manual: true, callback: { service: DeviceUsage }', 'edited v2'),
    );
    const reload = await nth(d, 'playbooks reloaded', 1);
    expect([reload.added, reload.changed, reload.removed]).to.deep.equal([[], ['edited'], []]);

    await callback(d, 'after-edit');
    const runs = await runsOfCallback(d, 'after-edit');
    expect(runs.map((r) => r.playbook)).to.deep.equal(['edited']);
    const after = await d.manualRun('edited', TOKEN);
    expect(after.status).to.equal('succeeded');
    expect(after.version).to.not.equal(before.version);
    // Both runs, the callback's and the manual one, said what the edited version says.
    await nth(d, 'edited v2', 2);
    expect(lines(d, 'edited v1')).to.have.length(1);
    // The service the edited playbook reacts to is registered for the account, as a start registers it.
    const usage = await untilDaemons([d], 'the DeviceUsage registration', async () => {
      const status = (await (await fetch(`${d.url}/status`)).json()) as { registrations: Json[] };
      const found = status.registrations.filter((r) => r.service === 'DeviceUsage');
      return found.length ? found : undefined;
    });
    expect(usage.map((r) => [r.accountName, r.ok])).to.deep.equal([[account, true]]);
  });

  it('starts an added playbook; one removed can no longer be started, and its schedule stops', async () => {
    const { dir, state } = await place('added-removed');
    await writeFile(join(dir, 'keep.yaml'), playbook('keep', `manual: true, ${EVERY_SECOND}`, 'keep ticks'));
    await writeFile(join(dir, 'gone.yaml'), playbook('gone', `manual: true, ${EVERY_SECOND}`, 'gone ticks'));
    const d = await start('daemon added-removed', dir, state);
    expect((await startRun(d, 'added')).status).to.equal(404);

    await writeFile(join(dir, 'added.yaml'), playbook('added', 'manual: true', 'added runs'));
    const added = await nth(d, 'playbooks reloaded', 1);
    expect([added.added, added.changed, added.removed]).to.deep.equal([['added'], [], []]);
    expect((await d.manualRun('added', TOKEN)).status).to.equal('succeeded');

    await logged(d, 'a fire of gone', (l) => l.message === 'schedule fired' && l.playbook === 'gone');
    await rm(join(dir, 'gone.yaml'));
    const removed = await nth(d, 'playbooks reloaded', 2);
    expect([removed.added, removed.changed, removed.removed]).to.deep.equal([[], [], ['gone']]);
    const refused = await startRun(d, 'gone');
    expect([refused.status, refused.body.error]).to.deep.equal([404, 'no playbook gone']);

    // `keep` goes on firing; `gone` fires no more (a fire under way as the set was swapped may still end).
    const keepFires = () => lines(d, 'schedule fired').filter((l) => l.playbook === 'keep').length;
    const goneRuns = () => scheduled(state, 'gone').length;
    const fired = keepFires();
    await untilDaemons([d], 'two fires of keep', async () => (keepFires() >= fired + 2 ? true : undefined));
    const gone = goneRuns();
    await untilDaemons([d], 'three more fires of keep', async () =>
      keepFires() >= fired + 5 ? true : undefined,
    );
    expect(goneRuns()).to.equal(gone);
    const status = (await (await fetch(`${d.url}/status`)).json()) as { schedules: { playbook: string }[] };
    expect(status.schedules.map((s) => s.playbook)).to.deep.equal(['keep']);
    // The console lists the set in force, each playbook with its file.
    const shown = (await (await fetch(`${d.url}/console/api/playbooks`)).json()) as {
      playbooks: { name: string; file: string }[];
    };
    expect(shown.playbooks.map((p) => [p.name, p.file])).to.deep.equal([
      ['added', join(dir, 'added.yaml')],
      ['keep', join(dir, 'keep.yaml')],
    ]);
  });

  it('keeps the playbooks it has when an edit is invalid, naming each problem at file:line:col in one line', async () => {
    const { dir, state } = await place('invalid');
    const file = join(dir, 'steady.yaml');
    await writeFile(file, playbook('steady', 'manual: true', 'steady v1'));
    const d = await start('daemon invalid', dir, state);

    // An action that does not exist (line 6), and, in another file, YAML that does not parse.
    await writeFile(
      file,
      playbook('steady', 'manual: true', 'steady v2').replace('uses: log', 'uses: no.such'),
    );
    const broken = join(dir, 'broken.yaml');
    await writeFile(broken, 'version: 1\nname: broken\non: { manual: true\n');
    const refusal = await logged(
      d,
      'a refused reload naming both files',
      (l) =>
        l.level === 'error' &&
        String(l.message).includes(`${file}:6:11: unknown action`) &&
        String(l.message).includes(`${broken}:`),
    );
    const message = String(refusal.message);
    expect(message).to.match(/^playbooks not reloaded \(file change\): 2 error\(s\) in the playbooks of /);
    expect(message).to.match(new RegExp(`${broken.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:\\d+:\\d+: `));
    expect(message).to.include('the previous playbooks stay in force');
    expect(message, 'one line').to.not.include('\n');
    expect(lines(d, 'playbooks reloaded')).to.deep.equal([]);

    const run = await d.manualRun('steady', TOKEN);
    expect(run.status).to.equal('succeeded');
    expect(lines(d, 'steady v1')).to.have.length(1);
    expect(lines(d, 'steady v2')).to.deep.equal([]);

    // Valid, but reading a secret that is not set: refused as a start refuses it.
    await writeFile(file, playbook('steady', 'manual: true', 'steady v3 ${{ secrets.STEADY_KEY }}'));
    await rm(broken);
    const unset = await logged(
      d,
      'a refused reload naming the unset secret',
      (l) => l.level === 'error' && String(l.message).includes('cannot run'),
    );
    expect(unset.message).to.equal(
      `playbooks not reloaded (file change): the playbooks of ${dir} cannot run: ${file}: playbook steady reads secrets.STEADY_KEY, not set: set FLEETBOOK_SECRET_STEADY_KEY; the previous playbooks stay in force`,
    );
    expect((await d.manualRun('steady', TOKEN)).status).to.equal('succeeded');
    expect(lines(d, 'steady v1')).to.have.length(2);
    expect(lines(d, 'playbooks reloaded')).to.deep.equal([]);
  });

  // Before, a refused reload was one log line: `/status` and `/metrics` showed nothing amiss, and the daemon ran on
  // until its next restart, which then refused to start on the files left broken.
  it('says in /status and /metrics while the files on disk are refused, until a reload takes them', async () => {
    const { dir, state } = await place('refused-visible');
    const file = join(dir, 'steady.yaml');
    await writeFile(file, playbook('steady', 'manual: true', 'steady v1'));
    const d = await start('daemon refused-visible', dir, state);
    const status = async () => (await (await fetch(`${d.url}/status`)).json()) as Json;
    const gauge = async () =>
      /^fleetbook_playbooks_reload_refused (\d+)$/m.exec(await (await fetch(`${d.url}/metrics`)).text())?.[1];
    expect([(await status()).reloadRefused, await gauge()]).to.deep.equal([undefined, '0']);

    await writeFile(
      file,
      playbook('steady', 'manual: true', 'steady v2').replace('uses: log', 'uses: no.such'),
    );
    await logged(d, 'the refused reload', (l) => l.level === 'error');
    const refused = (await status()).reloadRefused as Json;
    expect(refused.on).to.equal('file change');
    expect(new Date(String(refused.at)).toISOString()).to.equal(refused.at);
    expect(refused.problems).to.have.length(1);
    expect((refused.problems as string[])[0]).to.include(`${file}:6:11: unknown action`);
    expect(String(refused.error)).to.include(`${file}:6:11: unknown action`);
    expect(await gauge()).to.equal('1');

    await writeFile(file, playbook('steady', 'manual: true', 'steady v3'));
    await nth(d, 'playbooks reloaded', 1);
    expect([(await status()).reloadRefused, await gauge()]).to.deep.equal([undefined, '0']);
  });

  it('sees every save an editor makes by a rename, and a directory added with playbooks in it', async () => {
    const { dir, state } = await place('renames');
    const sub = join(dir, 'team');
    await mkdir(sub);
    const file = join(sub, 'saved.yaml');
    await writeFile(file, playbook('saved', 'manual: true', 'saved v1'));
    const d = await start('daemon renames', dir, state);
    // Written beside the file, then renamed over it: a new file each save. Node's own recursive watch lost the
    // file after the first such save.
    for (const [i, v] of ['v2', 'v3'].entries()) {
      await writeFile(join(sub, '.saved.yaml.swp'), playbook('saved', 'manual: true', `saved ${v}`));
      await rename(join(sub, '.saved.yaml.swp'), file);
      expect((await nth(d, 'playbooks reloaded', i + 1)).changed).to.deep.equal(['saved']);
    }
    await d.manualRun('saved', TOKEN);
    expect(lines(d, 'saved v3')).to.have.length(1);

    const more = join(dir, 'more');
    await mkdir(more);
    await writeFile(join(more, 'extra.yaml'), playbook('extra', 'manual: true', 'extra runs'));
    await untilDaemons([d], 'extra loaded', async () =>
      lines(d, 'playbooks reloaded').some((l) => (l.added as string[]).includes('extra')) ? true : undefined,
    );
    expect((await d.manualRun('extra', TOKEN)).status).to.equal('succeeded');
  });

  it('watches one file given as --playbooks, through its directory, and nothing else there', async () => {
    const { dir, state } = await place('one-file');
    const file = join(dir, 'alone.yaml');
    await writeFile(file, playbook('alone', 'manual: true', 'alone v1'));
    const d = await start('daemon one-file', file, state);
    // Another playbook beside it is not part of the set: its file is not read, nor its writes reloaded.
    await writeFile(join(dir, 'beside.yaml'), playbook('beside', 'manual: true', 'beside runs'));
    for (const [i, v] of ['v2', 'v3'].entries()) {
      await writeFile(join(dir, '.alone.tmp'), playbook('alone', 'manual: true', `alone ${v}`));
      await rename(join(dir, '.alone.tmp'), file);
      expect((await nth(d, 'playbooks reloaded', i + 1)).changed).to.deep.equal(['alone']);
    }
    expect(lines(d, 'playbooks reloaded')).to.have.length(2);
    await d.manualRun('alone', TOKEN);
    expect(lines(d, 'alone v3')).to.have.length(1);
    expect((await startRun(d, 'beside')).status).to.equal(404);
  });

  it('reloads on SIGHUP, with watching turned off', async () => {
    const { dir, state } = await place('sighup');
    const file = join(dir, 'hup.yaml');
    await writeFile(file, playbook('hup', 'manual: true', 'hup v1'));
    const d = await start('daemon sighup', dir, state, { FLEETBOOK_WATCH: '0' });
    await writeFile(file, playbook('hup', 'manual: true', 'hup v2'));
    d.proc.kill('SIGHUP');
    const reload = await nth(d, 'playbooks reloaded', 1);
    expect([reload.changed, reload.on]).to.deep.equal([['hup'], 'SIGHUP']);
    expect((await d.manualRun('hup', TOKEN)).status).to.equal('succeeded');
    expect(lines(d, 'hup v2')).to.have.length(1);
    expect(lines(d, 'hup v1')).to.deep.equal([]);
    expect(d.stderr).to.not.include('FLEETBOOK_WATCH is set, but fleetbook reads no such variable');
    expect(lines(d, 'watching the playbooks: an edit is reloaded')).to.deep.equal([]);
  });

  it('fires a schedule left unchanged by a reload once per occurrence, keeping its last fire', async () => {
    const { dir, state } = await place('unchanged-schedule');
    const file = join(dir, 'ticking.yaml');
    await writeFile(file, playbook('ticking', EVERY_SECOND, 'ticking v1'));
    const d = await start('daemon unchanged-schedule', dir, state);
    await nth(d, 'ticking v1', 2);

    // The steps change, the schedule does not.
    await writeFile(file, playbook('ticking', EVERY_SECOND, 'ticking v2'));
    const reload = await nth(d, 'playbooks reloaded', 1);
    expect(reload.changed).to.deep.equal(['ticking']);
    await nth(d, 'ticking v2', 3);

    const runs = scheduled(state, 'ticking');
    const times = runs.map((r) => r.at);
    expect(new Set(times).size, times.join(', ')).to.equal(times.length);
    expect(runs.filter((r) => r.reason !== 'schedule')).to.deep.equal([]);
    expect(new Set(runs.map((r) => r.version)).size).to.equal(2);
    // Registered once, at start: the reload kept the schedule and its last fire.
    expect(lines(d, 'schedule registered: it fires from now on')).to.have.length(1);
  });
});
