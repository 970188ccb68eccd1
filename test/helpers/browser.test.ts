/**
 * The browser tests' Chromium: one a test process, shared by its suites, and none left running once mocha ends,
 * in one process without `--exit` (mocha waits for nothing left open) and in parallel workers with it. Mocha runs
 * two files of two suites each, with FLEETBOOK_TEST_CHROMIUM a script that writes down each launch (its pid,
 * which stays Chromium's, and its parent's, the test process) and runs the machine's Chromium.
 */
import { execFile } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { CHROMIUM, until } from './browser.js';
import { tempDir } from './temp.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SPECS = ['test/fixtures/shared-browser/first.spec.ts', 'test/fixtures/shared-browser/second.spec.ts'];

/** The pids of the live processes (zombies are dead) of process group `group`. */
function groupMembers(group: number): number[] {
  const live: number[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so read after its closing parenthesis.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === group && state !== 'Z') live.push(Number(pid));
  }
  return live;
}

/**
 * This process's environment for the mocha run, FLEETBOOK_TEST_CHROMIUM the wrapper. Without MOCHA_WORKER_ID: run
 * by a parallel worker, this process has it, and a child mocha with it would take itself for a worker too.
 */
function childEnv(wrapper: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, FLEETBOOK_TEST_CHROMIUM: wrapper };
  delete env.MOCHA_WORKER_ID;
  return env;
}

/** Runs mocha on the two files with `args`; each Chromium launch as [pid, parent pid]. */
async function mochaLaunches(args: string[]): Promise<{ out: string; launches: [number, number][] }> {
  const dir = tempDir('fleetbook-shared-browser-');
  const log = join(dir, 'launches');
  const wrapper = join(dir, 'chromium');
  writeFileSync(wrapper, `#!/bin/sh\necho "$$ $PPID" >> '${log}'\nexec '${CHROMIUM}' "$@"\n`);
  chmodSync(wrapper, 0o755);
  writeFileSync(log, '');
  const run = new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      [
        join(root, 'node_modules/mocha/bin/mocha.js'),
        '--no-config',
        '--node-option',
        'import=tsx',
        '--timeout',
        '60000',
        ...args,
        ...SPECS,
      ],
      { cwd: root, env: childEnv(wrapper), timeout: 110_000 },
      (err, stdout, stderr) =>
        err
          ? reject(new Error(`mocha ${args.join(' ')}: ${err.message}\n${stdout}\n${stderr}`))
          : resolve(stdout),
    ),
  );
  const launched = () =>
    readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ').map(Number) as [number, number]);
  const out = await run.catch((e: unknown) => {
    // A mocha that failed or hung leaves nothing running either.
    for (const [pid] of launched())
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone already
      }
    throw e;
  });
  return { out, launches: launched() };
}

/** Every launched Chromium's processes have ended (killed ones a moment after mocha's exit). */
async function noneLeft(launches: [number, number][]): Promise<void> {
  for (const [pid] of launches)
    await until(`Chromium ${pid}'s processes to end`, async (seen) => {
      const live = groupMembers(pid);
      seen(`live: ${live.join(', ')}`);
      return live.length ? undefined : true;
    });
}

describe('test harness: the shared browser', function () {
  // Generous: each test runs a mocha of its own that starts Chromium, on a machine busy with the other tests.
  this.timeout(120_000);

  it('one process launches one Chromium for its four suites, and mocha without --exit ends with it closed', async () => {
    const { out, launches } = await mochaLaunches([]);
    expect(out).to.match(/4 passing/);
    expect(launches, 'the launches').to.have.length(1);
    await noneLeft(launches);
  });

  it('parallel workers launch one Chromium each at most, none left after mocha --exit', async () => {
    const { out, launches } = await mochaLaunches(['--parallel', '--jobs', '2', '--exit']);
    expect(out).to.match(/4 passing/);
    const parents = launches.map(([, parent]) => parent);
    expect(launches.length, 'the launches').to.be.within(1, 2);
    expect(new Set(parents).size, `the launching processes ${parents.join(', ')}`).to.equal(parents.length);
    await noneLeft(launches);
  });
});
