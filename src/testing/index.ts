/**
 * `fleetbook test`: the playbook tests of `NAME.test.yaml` files, each case on its own embedded emulator, a few
 * cases at a time. One line per case, each failed expectation at its `file:line`, and a summary line.
 */
import { availableParallelism } from 'node:os';
import { readdir, realpath, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { formatText } from '../playbook/diagnostics.js';
import { loadPlaybookFile } from '../playbook/load.js';
import type { Playbook, Step } from '../playbook/schema.js';
import { eachStep } from '../playbook/step-tree.js';
import { planOf } from '../runner/plan.js';
import { closest } from '../util/closest.js';
import { TEST_SUFFIX, whyUnreadable } from '../util/files.js';
import { noItems } from './items.js';
import { loadTestFile, siblingPlaybook, type TestFile } from './load.js';
import { caseRuns, runCase, type EarlierRun } from './run-case.js';
import { scheduleProblems } from './schedule.js';

export { testFileSchema } from './schema.js';

export interface TestOptions {
  /** Cases running at once. @default the machine's parallelism, at most 4 */
  concurrency?: number;
  /** Where the lines go, as they come. */
  write: (line: string) => void;
}

export interface TestTotals {
  passed: number;
  failed: number;
}

/**
 * The test files under `paths` (files, or directories searched for `*.test.yaml`), in the order of `paths`, those
 * of a directory sorted. A file named twice (a directory and a file in it, `./a` and `a`, a link and its target)
 * is one file, by its real path: it is kept once, under the name first given. A link is a test file by its name,
 * as a playbook is (playbookFiles): one that leads nowhere is not skipped, its loading says why.
 */
export async function findTestFiles(paths: string[]): Promise<string[]> {
  const walk = async (p: string, out: string[]): Promise<void> => {
    if (!(await stat(p)).isDirectory()) {
      out.push(p);
      return;
    }
    for (const e of await readdir(p, { withFileTypes: true })) {
      if (e.isDirectory() && e.name !== 'node_modules' && !e.name.startsWith('.'))
        await walk(join(p, e.name), out);
      else if (!e.isDirectory() && e.name.endsWith(TEST_SUFFIX)) out.push(join(p, e.name));
    }
  };
  const files: string[] = [];
  const seen = new Set<string>();
  for (const p of paths) {
    const found: string[] = [];
    await walk(p, found);
    for (const file of found.sort()) {
      // A link that leads nowhere has no real path: it is the file its name is.
      const real = await realpath(file).catch(() => resolve(file));
      if (seen.has(real)) continue;
      seen.add(real);
      files.push(file);
    }
  }
  return files;
}

/** Runs every case of `files`; a file that does not load, or whose playbook does not, fails as one case. */
export async function runTests(files: string[], o: TestOptions): Promise<TestTotals> {
  const totals = { passed: 0, failed: 0 };
  const jobs: { name: string; run: () => Promise<string[]> }[] = [];
  for (const file of files) {
    const tf = await loadTestFile(file);
    const pb = Array.isArray(tf) ? undefined : await loadedPlaybook(tf);
    if (Array.isArray(tf) || typeof pb !== 'object') {
      const problems = Array.isArray(tf) ? tf : [String(pb)];
      jobs.push({ name: `${file}: does not load`, run: async () => problems });
      continue;
    }
    const earlier = await earlierRuns(tf, pb);
    if (typeof earlier === 'string') {
      jobs.push({ name: `${file}: does not load`, run: async () => [earlier] });
      continue;
    }
    tf.cases.forEach((c, i) => {
      const runs = earlier[i] as EarlierRun[];
      const refused = [
        ...scheduleProblems(caseRuns(tf, i, pb, runs)).map(([path, message, key]) =>
          tf.problem(path, message, key),
        ),
        ...unreadNames(tf, i, [pb, ...runs.map((e) => e.playbook)]),
        ...unknownSteps(tf, i, pb),
      ];
      jobs.push({
        name: `${file}: ${String(c.name)}`,
        run: async () => (refused.length ? refused : runCase(tf, i, pb, runs)),
      });
    });
  }
  const limit = o.concurrency ?? Math.min(4, availableParallelism());
  // Lines come out in the order of the cases, each as soon as it and those before it are done.
  const results: (string[] | undefined)[] = [];
  let printed = 0;
  const flush = () => {
    for (; printed < jobs.length && results[printed]; printed++) {
      const failures = results[printed] as string[];
      const name = (jobs[printed] as { name: string }).name;
      if (failures.length) totals.failed++;
      else totals.passed++;
      o.write(`${failures.length ? 'FAIL' : 'ok  '} ${name}`);
      for (const f of failures) o.write(indent(f));
    }
  };
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < jobs.length; i = next++) {
      results[i] = await (jobs[i] as { run: () => Promise<string[]> })
        .run()
        .catch((e: unknown) => [`the case could not run: ${(e as Error).message}`]);
      flush();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, worker));
  o.write(`${totals.passed} passed, ${totals.failed} failed`);
  return totals;
}

/**
 * The problems of case `index`'s `secrets` and `webhooks` that no playbook of the case (its own, its earlier
 * runs') names: such a secret would change nothing, and such a receiver would get nothing, while the case passed
 * or failed for another reason. A playbook that chooses a secret at run time may read any.
 */
function unreadNames(tf: TestFile, index: number, playbooks: Playbook[]): string[] {
  const named = new Set<string>();
  for (const pb of playbooks) {
    const s = planOf(pb).secretsNamed;
    if (s === 'any') return [];
    for (const name of s) named.add(name);
  }
  const c = tf.cases[index] as Record<string, unknown>;
  const unread = (key: string) =>
    Object.keys((c[key] as Record<string, unknown> | undefined) ?? {}).filter((n) => !named.has(n));
  const list = [...named].map((n) => `\`${n}\``).join(', ');
  const they = playbooks.length > 1 ? 'the playbooks of the case read' : 'the playbook reads';
  const hint = (name: string) => {
    const [guess] = closest(name, [...named], 1);
    return guess ? `did you mean \`${guess}\`?` : list ? `${they} ${list}` : `${they} no secret`;
  };
  const problem = (key: string, name: string, message: string) =>
    tf.problem(['cases', index, key, name], message, true);
  return [
    ...unread('secrets').map((n) =>
      problem(
        'secrets',
        n,
        `secret \`${n}\` is read by no playbook of the case, so it changes nothing: ${hint(n)}`,
      ),
    ),
    ...unread('webhooks').map((n) =>
      problem(
        'webhooks',
        n,
        `receiver \`${n}\` would get nothing: no playbook of the case reads \`secrets.${n}\` (${hint(n)}); a receiver is given to the playbook as the secret of its name`,
      ),
    ),
  ];
}

/**
 * The steps case `index` expects something of that its playbook does not have: such an expectation could only
 * fail, saying nothing of what the run did.
 */
function unknownSteps(tf: TestFile, index: number, pb: Playbook): string[] {
  const steps = new Map<string, Step>();
  for (const list of [pb.steps, pb.finally]) eachStep(list, (s) => steps.set(s.id, s));
  const ids = [...steps.keys()];
  const expected = ((tf.cases[index] as Record<string, unknown>).expect ?? {}) as Record<string, unknown>;
  const bySteps = (expected.steps as Record<string, Record<string, unknown>> | undefined) ?? {};
  // `items` of a step that has none, or whose items the run does not keep, and `output` of a step that gives none
  // (a `set`, a `parallel`, a time `wait`) could only fail, as if the step had failed.
  const checks = [
    ['items', noItems],
    ['output', noOutput],
  ] as const;
  const members = Object.entries(bySteps).flatMap(([id, e]) => {
    const step = steps.get(id);
    if (!step || !e || typeof e !== 'object') return [];
    return checks.flatMap(([member, why]) => {
      const problem = member in e ? why(step) : undefined;
      return problem ? [tf.problem(['cases', index, 'expect', 'steps', id, member], problem, true)] : [];
    });
  });
  return Object.keys(bySteps)
    .filter((id) => !ids.includes(id))
    .map((id) => {
      const [guess] = closest(id, ids, 1);
      return tf.problem(
        ['cases', index, 'expect', 'steps', id],
        `the playbook has no step \`${id}\`: ${guess ? `did you mean \`${guess}\`?` : `its steps are ${ids.join(', ')}`}`,
        true,
      );
    })
    .concat(members);
}

/** Why a case may not expect the `output` of `step`, or undefined when it may: a step that gives none. */
function noOutput(step: Step): string | undefined {
  if ('set' in step)
    return `step \`${step.id}\` (set) gives no output: its values are the run's \`vars\`; check what a later step makes of them`;
  if ('parallel' in step) return `step \`${step.id}\` (parallel) gives no output: check the steps inside it`;
  if ('wait' in step && typeof step.wait === 'string')
    return `step \`${step.id}\` (a time wait) gives no output: check the steps after it`;
  return undefined;
}

/** The playbook of a test file, or its problems as text. */
async function loadedPlaybook(tf: TestFile): Promise<Playbook | string> {
  const loaded = await playbookAt(tf.playbook);
  if (!('unreadable' in loaded)) return loaded.playbook ?? loaded.problems;
  const why = `the playbook ${tf.playbook} cannot be read: ${loaded.unreadable}`;
  return tf.problem(
    ['playbook'],
    tf.playbook === siblingPlaybook(tf.file)
      ? `${why} (NAME.test.yaml runs NAME.yaml unless it gives \`playbook\`)`
      : why,
  );
}

/**
 * The earlier runs (`before`) of each case, their playbooks loaded (each file once), or the problems of those
 * that do not load as text: the test file does not load, as when its own playbook does not.
 */
async function earlierRuns(tf: TestFile, pb: Playbook): Promise<EarlierRun[][] | string> {
  const loaded = new Map<string, Promise<Awaited<ReturnType<typeof playbookAt>>>>([
    [tf.playbook, Promise.resolve({ playbook: pb })],
  ]);
  const problems: string[] = [];
  const runs: EarlierRun[][] = [];
  for (const [i, c] of tf.cases.entries()) {
    const own: EarlierRun[] = [];
    runs.push(own);
    for (const [j, e] of ((c.before as Record<string, unknown>[] | undefined) ?? []).entries()) {
      const file = typeof e.playbook === 'string' ? join(dirname(tf.file), e.playbook) : tf.playbook;
      if (!loaded.has(file)) loaded.set(file, playbookAt(file));
      const got = await (loaded.get(file) as ReturnType<typeof playbookAt>);
      if ('unreadable' in got)
        problems.push(
          tf.problem(
            ['cases', i, 'before', j, 'playbook'],
            `the playbook ${file} cannot be read: ${got.unreadable}`,
          ),
        );
      else if (!got.playbook) problems.push(got.problems);
      else own.push({ file, playbook: got.playbook });
    }
  }
  return problems.length ? [...new Set(problems)].join('\n') : runs;
}

/** The playbook of a file, why the file cannot be read, or its errors as text. */
async function playbookAt(
  file: string,
): Promise<{ playbook: Playbook } | { playbook?: undefined; problems: string } | { unreadable: string }> {
  let loaded;
  try {
    loaded = await loadPlaybookFile(file);
  } catch (e) {
    return { unreadable: whyUnreadable(e) };
  }
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error');
  if (loaded.playbook && !errors.length) return { playbook: loaded.playbook };
  return { problems: errors.map((d) => formatText(d, loaded.source)).join('\n') };
}

const indent = (text: string) =>
  text
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
