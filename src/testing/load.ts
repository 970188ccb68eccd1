/**
 * Loading a playbook test file: YAML with positions, checked against the test schema (schema.ts), every
 * problem at `file:line:col` with "did you mean" for an unknown member. A loaded file keeps where each value
 * is, so that a failed expectation is reported at its own line.
 */
import { basename, dirname, join } from 'node:path';
import { LineCounter, isCollection, isMap, isScalar, isSeq, parseDocument, visit, type Node } from 'yaml';
import { check } from '../api/validate.js';
import { formatText, type Diagnostic } from '../playbook/diagnostics.js';
import { durationProblem } from '../playbook/duration.js';
import { readSourceAmong, YAML_OPTIONS, yamlMessage, yamlShapeProblem } from '../playbook/source.js';
import { TEST_SUFFIX } from '../util/files.js';
import { parseIsoTime } from '../clock.js';
import { startTimeProblem } from '../emulator/limits.js';
import { AT_PATTERN, testFileSchema } from './schema.js';
import { settingProblems } from './world.js';

type Json = Record<string, unknown>;
export type Seg = string | number;

/** What a test file says, with the YAML position of any of its values. */
export interface TestFile {
  file: string;
  /** The playbook the cases run, resolved. */
  playbook: string;
  world: Json;
  faults: Json;
  cases: Json[];
  /** `file:line` of the value at `path` (or of its nearest ancestor that exists). */
  where(path: Seg[]): string;
  /**
   * A problem of the value at `path` (of its key when `key`; or of its nearest ancestor), as one found loading
   * the file is told.
   */
  problem(path: Seg[], message: string, key?: boolean): string;
}

/** The playbook a test file runs by default: `NAME.yaml` beside `NAME.test.yaml`. */
export function siblingPlaybook(file: string): string {
  return join(dirname(file), `${basename(file, TEST_SUFFIX)}.yaml`);
}

let schema: Json | undefined;

/** What a test file is, for one that is not even a mapping. */
const HOLDS =
  'a playbook test is a mapping of `cases` (at least one, each with a `name` and an `expect`), and may give `playbook`, `world` and `faults`';

/** The file, or its problems as `file:line:col: message` text with the source line and a caret. */
export async function loadTestFile(file: string): Promise<TestFile | string[]> {
  const { source, diagnostics } = await readSourceAmong(file);
  if (diagnostics.length) return diagnostics.map((d) => formatText(d, source));
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, ...YAML_OPTIONS });
  const problems: Diagnostic[] = [];
  const diagnostic = (offset: number, message: string, rule: Diagnostic['rule'] = 'schema'): Diagnostic => {
    const { line, col } = lines.linePos(offset);
    return { file, line, column: col, message, rule, severity: 'error' };
  };
  const report = (offset: number, message: string, rule?: Diagnostic['rule']) =>
    problems.push(diagnostic(offset, message, rule));
  for (const e of doc.errors) report(e.pos[0], yamlMessage(e, 'a playbook test'), 'yaml');
  const refused = problems.length ? undefined : yamlShapeProblem(doc, { visit, isCollection });
  if (refused) report(refused.offset, refused.message, 'yaml');
  const positions = (path: Seg[], key: boolean) => nodeAt(doc.contents as Node | null, path, key);
  const data = problems.length ? undefined : (doc.toJS({ maxAliasCount: 100 }) as unknown);
  // The schema would say `input must be object`: of an empty file, neither what is wrong nor what to write.
  if (!problems.length && (!data || typeof data !== 'object' || Array.isArray(data)))
    report(
      doc.contents?.range?.[0] ?? 0,
      `${data == null ? 'the file is empty' : 'the file is not a YAML mapping'}: ${HOLDS}`,
      'yaml',
    );
  if (!problems.length) {
    // A world's or a fault's value the emulator would refuse is told in its words, by its place in the file
    // (`faults.serverErrors must be a number from 0 to 1, got 1.5`), not in the schema's (`serverErrors must be
    // <= 1`): the schema's problem at the same place is not told again.
    const settings = settingProblems(data as Json);
    const told = new Set(settings.map((p) => p.path.join('/')));
    // The generated validator answers for a valid file; the schema is made only to explain a problem.
    const test = () => (schema ??= testFileSchema());
    for (const p of check(test, data, 'test-file', (pointer) => placeName(data, pointer))) {
      const path = p.path.split('/').slice(1).filter(Boolean).map(unescape);
      if (!told.has(path.join('/'))) report(positions(path, Boolean(p.name)), p.message.replace(/^\//, ''));
    }
    for (const p of settings) report(positions(p.path, false), p.message, p.rule);
    const cases = (data as Json | undefined)?.cases;
    if (Array.isArray(cases))
      cases.forEach((c: Json, i) => {
        if (!c || typeof c !== 'object') return;
        const before = Array.isArray(c.before) ? (c.before as unknown[]) : [];
        for (const [path, message] of startProblems(c, before))
          report(positions(['cases', i, ...path], true), message);
        for (const [path, message] of timeOrder(c, before))
          report(positions(['cases', i, ...path], false), message);
        // As a playbook's durations are: zero, or longer than a timer can wait, cannot work.
        const timeout =
          typeof c?.timeout === 'string'
            ? durationProblem('timeout', c.timeout, 'the run would be cancelled at once')
            : undefined;
        if (timeout) report(positions(['cases', i, 'timeout'], false), timeout, 'duration');
      });
    if (!problems.length) {
      const d = data as Json;
      const playbook =
        typeof d.playbook === 'string' ? join(dirname(file), d.playbook) : siblingPlaybook(file);
      return {
        file,
        playbook,
        world: (d.world as Json | undefined) ?? {},
        faults: (d.faults as Json | undefined) ?? {},
        cases: d.cases as Json[],
        where: (path) => `${file}:${lines.linePos(positions(path, false)).line}`,
        problem: (path, message, key = false) =>
          formatText(diagnostic(positions(path, key), message), source),
      };
    }
  }
  return problems.sort((a, b) => a.line - b.line || a.column - b.column).map((d) => formatText(d, source));
}

/** What a case, and each of its earlier runs, gives that does not go together, at the key that is too many. */
function startProblems(c: Json, before: unknown[]): [Seg[], string][] {
  const out: [Seg[], string][] = [];
  const of = (run: Json, at: Seg[], a: string) => {
    if ('event' in run && 'inputs' in run)
      out.push([[...at, 'inputs'], `${a} gives an event or inputs, not both`]);
    if (!('schedule' in run)) return;
    if ('event' in run)
      out.push([
        [...at, 'event'],
        `${a} gives an event or a schedule, not both: a scheduled run has no event`,
      ]);
    if ('inputs' in run)
      out.push([
        [...at, 'inputs'],
        'a scheduled run has no inputs of its own (it gets their defaults): give `schedule` or `inputs`, not both',
      ]);
  };
  before.forEach((e, j) => {
    if (e && typeof e === 'object') of(e as Json, ['before', j], 'an earlier run');
  });
  of(c, [], 'a case');
  return out;
}

/**
 * The `schedule.at` of the runs of a case that is no time, that the emulator cannot start at, or that is before
 * that of a run before it: they run in order.
 */
function timeOrder(c: Json, before: unknown[]): [Seg[], string][] {
  const out: [Seg[], string][] = [];
  const runs: [Seg[], unknown][] = [...before.map((e, j): [Seg[], unknown] => [['before', j], e]), [[], c]];
  let last: { at: number; text: string; who: string } | undefined;
  for (const [path, run] of runs) {
    const given = run && typeof run === 'object' ? (run as Json).schedule : undefined;
    const text = given && typeof given === 'object' ? (given as Json).at : undefined;
    // One that is not even written as a time is told by the schema.
    if (typeof text !== 'string' || !new RegExp(AT_PATTERN).test(text)) continue;
    const place: Seg[] = [...path, 'schedule', 'at'];
    // A day or an hour that does not exist, or one the emulator cannot start at.
    const problem = startTimeProblem(text, 'schedule.at');
    const at = parseIsoTime(text);
    if (problem || at === undefined) {
      out.push([place, problem ?? '']);
      continue;
    }
    const who = path.length ? `earlier run ${Number(path[1]) + 1}` : 'the case';
    if (last && at < last.at)
      out.push([
        place,
        `${who} runs at ${text}, before ${last.who} (${last.text}): the runs of a case are in the order of their times`,
      ]);
    else last = { at, text, who };
  }
  return out;
}

/**
 * A value of the file by its whole place, as a world's or a fault's problem names it: from its case, when it is
 * in one (`expect.calls.devices.suspend`, `before[0].inputs`), else from the top of the file (`world.seed`).
 */
function placeName(data: unknown, pointer: string): string {
  const path = pointer.split('/').slice(1).map(unescape);
  let value = data;
  let name = '';
  path.forEach((seg, i) => {
    name += Array.isArray(value) ? `[${seg}]` : `${name ? '.' : ''}${seg}`;
    // The case is where the value is: its number is in the line the problem is told at.
    if (i === 1 && path[0] === 'cases' && path.length > 2) name = '';
    value = value && typeof value === 'object' ? (value as Record<string, unknown>)[String(seg)] : undefined;
  });
  return name || 'the file';
}

function unescape(s: string): Seg {
  const t = s.replace(/~1/g, '/').replace(/~0/g, '~');
  return /^\d+$/.test(t) ? Number(t) : t;
}

/** The offset of the node at `path` (its key when `key`), or of its deepest existing ancestor. */
function nodeAt(root: Node | null, path: Seg[], key: boolean): number {
  let node = root;
  let offset = root?.range?.[0] ?? 0;
  for (const seg of path) {
    let next: Node | null | undefined;
    let keyNode: Node | undefined;
    if (node && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      keyNode = pair?.key as Node | undefined;
      next = pair ? ((pair.value as Node | null) ?? keyNode) : undefined;
    } else if (node && isSeq(node)) next = node.items[Number(seg)] as Node | undefined;
    if (!next) return offset;
    node = next;
    offset = (key && keyNode ? keyNode.range?.[0] : next.range?.[0]) ?? offset;
  }
  return offset;
}
