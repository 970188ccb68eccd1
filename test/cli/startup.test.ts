/**
 * What commands load, in a child process as a user runs them (dist/ must be built; `npm test` builds it):
 * - `fleetbook runs` reads the store and nothing else: no runner, API client, schema library or ajv compiler
 *   (the configuration is checked by the validator the build generated);
 * - `fleetbook run` of a valid playbook builds no schema: the generated validators vouch for the playbook and
 *   for every request, so TypeBox and ajv's compiler stay unloaded; nor, off a terminal and for a playbook in
 *   the everyday subset of YAML without a schedule, the YAML parser, the cron library and the progress bar;
 * - `run`, `serve` and `emulator` load undici's pools but not its index (all of undici), and at level `warn`, a
 *   run or a start that goes well writing no line, not winston;
 * - a `run` its checks refuse (an input missing, a bad flag) and `emulator` load none of the engine: no runner,
 *   store or API client.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { BIN, emulatorEnv, fleetbook, stateFile } from '../helpers/cli.js';
import { DaemonProcess, DaemonWorld } from '../helpers/daemon.js';
import { emulator } from '../runner/helpers.js';
import { SUSPEND_ACTIVE } from '../runner/playbooks.js';

const MODULE_LOG = join(import.meta.dirname, '..', 'helpers', 'module-log.mjs');
/** TypeBox, and ajv's compiler (its standalone validators need only ajv's small runtime helpers). */
const SCHEMA_BUILDING = /\/node_modules\/typebox\/|\/node_modules\/ajv\/dist\/(compile|core|ajv|2020)/;
/** undici's index, which loads all of it (fetch, WebSocket, the caches, the mocks): only its Pool, Agent and API are used. */
const UNDICI_INDEX = /\/node_modules\/undici\/index\.js$/;
/** undici's Pool, which the API client and the emulator's callbacks use. */
const UNDICI_POOL = /\/node_modules\/undici\/lib\/dispatcher\/pool\.js$/;
/** The engine: the runner, the stores and the API client, none of which a refused `run` nor the emulator needs. */
const ENGINE =
  /\/dist\/(runner\/runner|store\/(open|sqlite|postgres)|api\/client)\.js$|\/node_modules\/better-sqlite3\//;

describe('fleetbook runs (child process)', function () {
  this.timeout(30_000);
  const state = stateFile((store) =>
    store.createRun({
      id: 'run-listed-1',
      playbook: 'listed',
      status: 'succeeded',
      trigger: { type: 'manual' },
      inputs: {},
      startedAt: '2026-11-22T00:00:00.000Z',
      endedAt: '2026-11-22T00:00:01.000Z',
    }),
  );
  let env: Record<string, string>;
  before(() => {
    env = { ...state.env, MODULE_LOG: join(state.dir, 'modules.txt') };
  });

  async function loaded(): Promise<string[]> {
    return (await readFile(env.MODULE_LOG as string, 'utf8')).split('\n').filter(Boolean);
  }

  it('runs list prints the run, having loaded only the store, the configuration and its validator', async () => {
    const r = await fleetbook(['runs', 'list'], env, ['--import', MODULE_LOG]);
    expect(r.stderr).to.equal('');
    expect(r.code).to.equal(0);
    expect(r.stdout).to.match(
      /^RUN ID {8}STARTED {19}STATUS {5}TRIGGER {2}PLAYBOOK {2}OWNER\nrun-listed-1 {2}2026-11-22T00:00:00\.000Z {2}succeeded {2}manual {3}listed {4}-\n$/,
    );
    const modules = await loaded();
    // The log works: it saw the command, the store and the configuration's generated validator.
    expect(modules.some((m) => m.endsWith('/dist/cli/runs.js'))).to.equal(true);
    expect(modules.some((m) => m.includes('/node_modules/better-sqlite3/'))).to.equal(true);
    expect(modules.some((m) => m.endsWith('/dist/generated/config.cjs'))).to.equal(true);
    const heavy = modules.filter(
      (m) =>
        SCHEMA_BUILDING.test(m) ||
        /\/node_modules\/(undici|yaml|winston)\/|\/dist\/(runner\/|api\/client|api\/catalog|playbook\/load)/.test(
          m,
        ),
    );
    expect(heavy).to.deep.equal([]);
  });

  it('runs show of an unknown run exits 1 and says so', async () => {
    const r = await fleetbook(['runs', 'show', 'no-such-run'], env);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.equal('fleetbook: no run no-such-run\n');
  });

  it('an invalid configuration is reported by variable, with the generated validator', async () => {
    const r = await fleetbook(['runs', 'list'], { ...env, FLEETBOOK_CONCURRENCY: '0' }, [
      '--import',
      MODULE_LOG,
    ]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include('FLEETBOOK_CONCURRENCY');
    expect(r.stderr).to.include('>= 1');
    // Explaining the problem compiles the schema: only then is ajv's compiler loaded.
    expect((await loaded()).some((m) => m.includes('/node_modules/ajv/dist/compile/'))).to.equal(true);
  });

  it('run of a valid playbook suspends its devices without building a schema', async () => {
    const emu = await emulator({ devicesPerAccount: 30 });
    try {
      const file = join(state.dir, 'suspend.yaml');
      await writeFile(file, SUSPEND_ACTIVE({ name: 'startup-suspend', batchSize: 10, concurrency: 2 }));
      const r = await fleetbook(
        ['run', file, '--json', '--input', `account=${emu.defaults.accounts[0]!}`],
        { ...env, ...emulatorEnv(emu), FLEETBOOK_LOG_LEVEL: 'warn' },
        ['--import', MODULE_LOG],
      );
      expect(r.code, r.stderr).to.equal(0);
      const summary = JSON.parse(r.stdout) as RunSummary;
      expect(summary.status).to.equal('succeeded');
      expect(summary.devices.succeeded).to.be.greaterThan(0);
      const modules = await loaded();
      // The log saw the run: the runner, the client and the generated request validator of the suspend.
      expect(modules.some((m) => m.endsWith('/dist/runner/runner.js'))).to.equal(true);
      expect(modules.some((m) => m.endsWith('/dist/generated/input_devices.suspend.cjs'))).to.equal(true);
      expect(
        modules.filter(
          (m) =>
            SCHEMA_BUILDING.test(m) ||
            /\/dist\/(api\/schemas|playbook\/schema\.js|actions\/engine-schemas)/.test(m),
        ),
      ).to.deep.equal([]);
      expect(modules.filter((m) => /\/node_modules\/(yaml|croner|cli-progress)\//.test(m))).to.deep.equal([]);
      // The client's connections, without the rest of undici.
      expect(modules.some((m) => UNDICI_POOL.test(m))).to.equal(true);
      expect(modules.filter((m) => UNDICI_INDEX.test(m))).to.deep.equal([]);
      // At level warn a run that goes well writes no line: the logger never loads winston.
      expect(modules.filter((m) => m.includes('/node_modules/winston/'))).to.deep.equal([]);
    } finally {
      await emu.close();
    }
  });

  it('test of a valid test file passes its cases without building a schema', async () => {
    const file = join(import.meta.dirname, '..', '..', 'playbooks', 'suspend-on-overuse.test.yaml');
    const r = await fleetbook(['test', file], env, ['--import', MODULE_LOG]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/\b[1-9][0-9]* passed, 0 failed\n$/);
    const modules = await loaded();
    // The log saw the test runner and the generated validator of the test file.
    expect(modules.some((m) => m.endsWith('/dist/testing/run-case.js'))).to.equal(true);
    expect(modules.some((m) => m.endsWith('/dist/generated/test-file.cjs'))).to.equal(true);
    expect(modules.filter((m) => SCHEMA_BUILDING.test(m))).to.deep.equal([]);
  });

  it('run of an invalid playbook loads the schemas to explain the problem at its line', async () => {
    const file = join(state.dir, 'invalid.yaml');
    await writeFile(
      file,
      'version: 1\nname: startup-invalid\non: { manual: true }\nsteps:\n  - id: s\n    uses: devices.suspend\n    with: { accountName: 42 }\n',
    );
    const r = await fleetbook(['run', file], env, ['--import', MODULE_LOG]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.match(/invalid\.yaml:7:\d+/);
    // The schemas are require()d on first use (util/on-first-use.ts), which puts them in require.cache.
    const modules = await loaded();
    expect(modules.some((m) => m.endsWith('/dist/playbook/schema.js'))).to.equal(true);
    // The full path reads the file with the YAML parser, for the positions of its problems.
    expect(modules.some((m) => m.includes('/node_modules/yaml/'))).to.equal(true);
  });

  it('run refused at its checks (an input missing) says why having loaded none of the engine', async () => {
    const file = join(state.dir, 'needs-input.yaml');
    await writeFile(file, SUSPEND_ACTIVE({ name: 'startup-needs-input', batchSize: 10, concurrency: 2 }));
    const r = await fleetbook(['run', file], env, ['--import', MODULE_LOG]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/^fleetbook: .*--input account=/);
    const modules = await loaded();
    // The log saw the command and the playbook's check.
    expect(modules.some((m) => m.endsWith('/dist/cli/run.js'))).to.equal(true);
    expect(modules.some((m) => m.endsWith('/dist/playbook/load.js'))).to.equal(true);
    expect(modules.filter((m) => ENGINE.test(m))).to.deep.equal([]);
  });
});

/** The daemon's bearer token of these tests. */
const TOKEN = 'startup-daemon-token-0123456789';
/**
 * Fastify's schema compilers: ajv, through fastify's own, and the JSON serializer's compiler (its runtime, which
 * the precompiled error serializer uses, is not one).
 */
const FASTIFY_COMPILERS =
  /\/node_modules\/(@fastify\/ajv-compiler\/|@fastify\/fast-json-stringify-compiler\/|fast-json-stringify\/index\.js)/;

describe('fleetbook serve and emulator (child processes)', function () {
  this.timeout(60_000);
  let world: DaemonWorld;
  before(async () => {
    world = await DaemonWorld.create('startup', { user: 'listener', password: 'listener-password' });
    await mkdir(join(world.dir, 'playbooks'));
    await writeFile(
      join(world.dir, 'playbooks', 'suspend.yaml'),
      SUSPEND_ACTIVE({ name: 'startup-serve', batchSize: 10, concurrency: 2 }),
    );
  });
  after(() => world?.close());

  async function loaded(log: string): Promise<string[]> {
    return (await readFile(log, 'utf8')).split('\n').filter(Boolean);
  }

  it('serve answers a run without loading a schema compiler for its routes', async () => {
    const log = join(world.dir, 'serve-modules.txt');
    const d = await DaemonProcess.start('startup daemon', {
      playbooks: join(world.dir, 'playbooks'),
      state: world.state(),
      env: world.env({ MODULE_LOG: log, FLEETBOOK_LOG_LEVEL: 'warn', FLEETBOOK_DAEMON_TOKEN: TOKEN }),
      nodeArgs: ['--import', MODULE_LOG],
    });
    try {
      const summary = await d.manualRun('startup-serve', TOKEN, {
        account: world.emu.defaults.accounts[0]!,
      });
      expect(summary.status).to.equal('succeeded');
      expect((await d.stop()).code).to.equal(0);
    } finally {
      await d.kill();
    }
    const modules = await loaded(log);
    // The log saw the daemon and its HTTP server.
    expect(modules.some((m) => m.endsWith('/dist/daemon/daemon.js'))).to.equal(true);
    expect(modules.some((m) => m.includes('/node_modules/fastify/'))).to.equal(true);
    expect(modules.filter((m) => FASTIFY_COMPILERS.test(m))).to.deep.equal([]);
    expect(modules.some((m) => UNDICI_POOL.test(m))).to.equal(true);
    expect(modules.filter((m) => UNDICI_INDEX.test(m))).to.deep.equal([]);
    // At level warn a daemon that goes well writes no line: the logger never loads winston.
    expect(modules.filter((m) => m.includes('/node_modules/winston/'))).to.deep.equal([]);
  });

  it('emulator serves without loading a schema compiler or the schema library', async () => {
    const log = join(world.dir, 'emulator-modules.txt');
    const child = spawn(process.execPath, ['--import', MODULE_LOG, BIN, 'emulator', '--port', '0'], {
      env: { PATH: process.env.PATH ?? '', MODULE_LOG: log, FLEETBOOK_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (s: string) => {
          out += s;
          const m = /API base URL +(http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1] as string);
        });
        void exited.then((code) => reject(new Error(`the emulator exited ${code}: ${out}`)));
      });
      // A request through its routes: the token endpoint refuses a client it does not know.
      const res = await fetch(`${url}/ts/v1/oauth2/token`, { method: 'POST', body: '' });
      expect(res.status).to.be.within(400, 499);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).to.equal(0);
    const modules = await loaded(log);
    expect(modules.some((m) => m.endsWith('/dist/emulator/server.js'))).to.equal(true);
    expect(modules.some((m) => m.includes('/node_modules/fastify/'))).to.equal(true);
    expect(modules.filter((m) => FASTIFY_COMPILERS.test(m))).to.deep.equal([]);
    // Nor the schema library: the emulator checks requests with the generated validators.
    expect(modules.filter((m) => SCHEMA_BUILDING.test(m))).to.deep.equal([]);
    // Its callbacks' connections, without the rest of undici.
    expect(modules.some((m) => /\/node_modules\/undici\/lib\/dispatcher\/agent\.js$/.test(m))).to.equal(true);
    expect(modules.filter((m) => UNDICI_INDEX.test(m))).to.deep.equal([]);
    expect(modules.filter((m) => m.includes('/node_modules/winston/'))).to.deep.equal([]);
    // Nor the engine, which it stands beside.
    expect(modules.filter((m) => ENGINE.test(m))).to.deep.equal([]);
  });
});
