/**
 * The playbook loader: YAML with positions → a checked playbook, or every problem at `file:line:col`.
 *
 * 1. Parse with `yaml`, keeping positions; duplicate keys are errors, alias expansion is capped (no
 *    billion laughs), and `__proto__` / `constructor` are plain keys (yaml defines them as own properties).
 * 2. Check the top level against the playbook schema, then each step against the schema of its kind, and each
 *    `with` against its action's request schema (expressions allowed in place of values). Checking piece by
 *    piece keeps ajv's messages about the piece that is wrong, instead of one per branch of a union.
 * 3. Semantic checks: unique step ids, references to earlier steps only, expressions parsed and type-checked,
 *    declared inputs, retry selectors the action can meet, cron, time zones, unreachable steps.
 */
import { readFile } from 'node:fs/promises';
import { isAlias, isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { ACTIONS } from '../api/catalog.js';
import { check } from '../api/validate.js';
import { ENGINE_ACTION_NAMES } from '../actions/engine.js';
import { deviceSelectorProblem, stepSelectorProblem } from '../actions/selectors.js';
import { checkExpression, LOOP_VARIABLES } from '../expressions/cel.js';
import { findExpressions } from '../expressions/template.js';
import { closest } from '../util/closest.js';
import { sortDiagnostics, type Diagnostic, type Rule, type Severity } from './diagnostics.js';
import { readSimpleYaml } from './fast-yaml.js';
import { protectExpressions, restoreDocument, restoreScalar } from './protect.js';
import { cronProblem, firesMoreThanOncePerMinute, isTimeZone } from './schedule.js';
import {
  allowExpressions,
  PLAYBOOK_TOP,
  STEP_KINDS,
  STEP_SCHEMAS,
  withSchemaFor,
  type Playbook,
} from './schema.js';

type Seg = string | number;
type Json = Record<string, unknown>;

export interface LoadedPlaybook {
  file: string;
  source: string;
  /** Present when there is no error (warnings allowed). */
  playbook?: Playbook;
  diagnostics: Diagnostic[];
}

/** Most aliases a playbook may expand; far above any real use, far below a billion laughs. */
const MAX_ALIASES = 100;
const KNOWN_ACTIONS: readonly string[] = [...ACTIONS, ...ENGINE_ACTION_NAMES];
const withSchemas = new Map<string, object>();

export async function loadPlaybookFile(file: string): Promise<LoadedPlaybook> {
  return loadPlaybook(await readFile(file, 'utf8'), file);
}

export function loadPlaybook(source: string, file = '<input>'): LoadedPlaybook {
  const valid = loadValid(source, file);
  if (valid) return valid;
  const c = new Checker(source, file);
  const data = c.parse();
  if (data !== undefined) c.checkPlaybook(data);
  const diagnostics = sortDiagnostics(c.diagnostics.map((d) => ({ ...d, message: c.restore(d.message) })));
  const ok = data !== undefined && !diagnostics.some((d) => d.severity === 'error');
  return { file, source, diagnostics, ...(ok ? { playbook: data as unknown as Playbook } : {}) };
}

/**
 * The common case, fast: a playbook in the everyday subset of YAML (fast-yaml.ts) with nothing to report.
 * Its data is read without positions and checked; at the first diagnostic, or when the YAML is outside the
 * subset, this gives up (undefined) and loadPlaybook takes the full path, which finds and positions every
 * diagnostic. The data is the same either way, and so are the checks, so the outcome is too.
 */
function loadValid(source: string, file: string): LoadedPlaybook | undefined {
  const safe = protectExpressions(source);
  const data = readSimpleYaml(safe.text, (value, style) => restoreScalar(safe, value, style));
  if (!data) return undefined;
  const c = new Checker(source, file, true);
  try {
    c.checkPlaybook(data);
  } catch (e) {
    if (e === FOUND) return undefined;
    throw e;
  }
  return { file, source, diagnostics: [], playbook: data as unknown as Playbook };
}

/** Thrown by a Checker in `quick` mode at its first diagnostic. */
const FOUND: unique symbol = Symbol('diagnostic found');

export function hasErrors(r: LoadedPlaybook): boolean {
  return r.diagnostics.some((d) => d.severity === 'error');
}

interface StepSite {
  id: string;
  path: Seg[];
  order: number;
  inLoop: boolean;
  /** The parallel branches it is inside, as `<parallel path>:<branch>`. */
  branch: string[];
}

interface ExprSite {
  text: string;
  path: Seg[];
  /** Pre-order position of the step that owns the field; steps before it may be referenced. */
  order: number;
  inLoop: boolean;
  branch: string[];
}

class Checker {
  readonly diagnostics: Diagnostic[] = [];
  private lc = new LineCounter();
  private doc?: Document;
  private steps: StepSite[] = [];
  private exprs: ExprSite[] = [];
  private order = 0;
  private branch: string[] = [];
  restore: (s: string) => string = (s) => s;

  constructor(
    private readonly source: string,
    private readonly file: string,
    /** Checking data read without positions: stop at the first diagnostic (throw FOUND). */
    private readonly quick = false,
  ) {}

  // ── parsing ───────────────────────────────────────────────────────────────────────────────────

  parse(): Json | undefined {
    try {
      return this.parseYaml();
    } catch (e) {
      // The yaml parser recurses: absurdly deep nesting exhausts the stack. Report it; never crash.
      this.reportOffset(
        0,
        'yaml',
        `the YAML could not be parsed: ${firstLine((e as Error).message)} (nested too deeply?)`,
      );
      return undefined;
    }
  }

  private parseYaml(): Json | undefined {
    const safe = protectExpressions(this.source);
    this.restore = safe.restore;
    const doc = parseDocument(safe.text, { lineCounter: this.lc, uniqueKeys: true, prettyErrors: false });
    this.doc = doc;
    // One syntax error per line: the ones after it on the same line only echo it.
    const lines = new Set<number>();
    for (const e of doc.errors) {
      const line = this.lc.linePos(e.pos[0]).line;
      if (lines.has(line)) continue;
      lines.add(line);
      const rule: Rule = e.code === 'DUPLICATE_KEY' ? 'duplicate-key' : 'yaml';
      const message =
        e.code === 'DUPLICATE_KEY' ? `duplicate key ${this.keyAt(e.pos[0])}` : firstLine(e.message);
      this.reportOffset(e.pos[0], rule, message);
    }
    if (doc.errors.length) return undefined;
    let data: unknown;
    try {
      restoreDocument(doc, safe);
      data = doc.toJS({ maxAliasCount: MAX_ALIASES }) as unknown;
    } catch (e) {
      this.reportOffset(
        0,
        'yaml',
        `${firstLine((e as Error).message)} (aliases are capped at ${MAX_ALIASES})`,
      );
      return undefined;
    }
    if (!data || typeof data !== 'object' || Array.isArray(data)) {
      this.reportOffset(0, 'yaml', 'a playbook is a YAML mapping (version, name, on, steps, ...)');
      return undefined;
    }
    return data as Json;
  }

  private keyAt(offset: number): string {
    const m = /^[\s-]*("[^"]*"|'[^']*'|[^:\s]+)/.exec(this.source.slice(offset));
    return m ? `\`${m[1]}\`` : '';
  }

  // ── the checks ────────────────────────────────────────────────────────────────────────────────

  checkPlaybook(pb: Json): void {
    this.schemaProblems(PLAYBOOK_TOP, pb, []);
    const inputs = isObject(pb.inputs) ? pb.inputs : {};
    for (const [name, decl] of Object.entries(inputs)) this.checkInput(name, decl);
    this.checkTriggers(pb.on);
    if (isObject(pb.vars)) this.collectExprs(pb.vars, ['vars'], -1, false);
    if (isObject(pb.concurrency)) this.collectExprs(pb.concurrency.key, ['concurrency', 'key'], -1, false);
    if (Array.isArray(pb.steps)) this.walkSteps(pb.steps, ['steps'], false);
    if (Array.isArray(pb.finally)) this.walkSteps(pb.finally, ['finally'], false);
    this.checkIds();
    this.checkExpressions(new Set(Object.keys(inputs)));
  }

  private checkInput(name: string, decl: unknown): void {
    if (!isObject(decl) || decl.default === undefined || typeof decl.type !== 'string') return;
    const d = decl.default;
    const fits: Record<string, boolean> = {
      string: typeof d === 'string',
      integer: Number.isInteger(d),
      number: typeof d === 'number',
      boolean: typeof d === 'boolean',
      array: Array.isArray(d),
      object: isObject(d),
    };
    if (fits[decl.type] === false) {
      this.report(
        ['inputs', name, 'default'],
        'value',
        'input',
        `the default of input \`${name}\` is not of type ${decl.type}`,
      );
    }
    if (Array.isArray(decl.enum) && !decl.enum.some((v) => JSON.stringify(v) === JSON.stringify(d))) {
      this.report(
        ['inputs', name, 'default'],
        'value',
        'input',
        `the default of input \`${name}\` is not one of its enum values`,
      );
    }
  }

  private checkTriggers(on: unknown): void {
    if (!isObject(on)) return;
    const list = (v: unknown) => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
    const multi = (key: string, i: number): Seg[] => (Array.isArray(on[key]) ? ['on', key, i] : ['on', key]);
    list(on.callback).forEach((cb, i) => {
      if (isObject(cb)) this.collectExprs(cb.if, [...multi('callback', i), 'if'], -1, false);
    });
    list(on.schedule).forEach((s, i) => {
      if (!isObject(s)) return;
      const at = multi('schedule', i);
      if (typeof s.cron === 'string') {
        const problem = cronProblem(s.cron);
        if (problem) this.report([...at, 'cron'], 'value', 'cron', problem);
        else if (firesMoreThanOncePerMinute(s.cron)) {
          this.report(
            [...at, 'cron'],
            'value',
            'schedule-frequency',
            `schedule ${JSON.stringify(s.cron)} fires more than once a minute`,
            'warning',
          );
        }
      }
      if (typeof s.timezone === 'string' && !isTimeZone(s.timezone)) {
        this.report(
          [...at, 'timezone'],
          'value',
          'timezone',
          `unknown time zone ${JSON.stringify(s.timezone)} (use an IANA name such as America/New_York)`,
        );
      }
    });
  }

  /** Walks a list of steps; `parallel` when they are the branches of a parallel step, which run side by side. */
  private walkSteps(steps: unknown[], path: Seg[], inLoop: boolean, parallel = false): void {
    let stopped = false;
    const key = path.join('/');
    steps.forEach((step, i) => {
      if (parallel) this.branch.push(`${key}:${i}`);
      try {
        this.walkOne(step, [...path, i], inLoop, stopped);
      } finally {
        if (parallel) this.branch.pop();
      }
      if (!parallel && isObject(step) && 'fail' in step && step.if === undefined) stopped = true;
    });
  }

  private walkOne(step: unknown, at: Seg[], inLoop: boolean, stopped: boolean): void {
    {
      if (!isObject(step)) {
        this.report(
          at,
          'value',
          'schema',
          'a step is a mapping with an id and one of uses, forEach, parallel, set, fail, wait',
        );
        return;
      }
      if (stopped)
        this.report(
          [...at, 'id'],
          'value',
          'unreachable',
          'this step can never run: an unconditional `fail` comes before it',
          'warning',
        );
      if (step.if === false)
        this.report(
          [...at, 'if'],
          'value',
          'unreachable',
          'this step never runs: its condition is false',
          'warning',
        );
      this.checkStep(step, at, inLoop);
    }
  }

  private checkStep(step: Json, path: Seg[], inLoop: boolean): void {
    const order = this.order++;
    if (typeof step.id === 'string')
      this.steps.push({ id: step.id, path, order, inLoop, branch: [...this.branch] });
    const kinds = STEP_KINDS.filter((k) => k in step);
    // `wait` beside `uses` means "wait for completion", not a wait step.
    const kind = kinds[0];
    if (!kind) {
      this.report(
        path,
        'value',
        'step-kind',
        `step ${typeof step.id === 'string' ? `\`${step.id}\` ` : ''}needs one of uses, forEach, parallel, set, fail, wait`,
      );
      return;
    }
    const extra = kinds.filter((k) => k !== kind && !(kind === 'uses' && k === 'wait'));
    if (extra.length) {
      this.report(
        [...path, extra[0] as string],
        'key',
        'step-kind',
        `a step is one of uses, forEach, parallel, set, fail, wait; this one has ${kind} and ${extra.join(', ')}`,
      );
      return;
    }
    this.schemaProblems(STEP_SCHEMAS[kind], step, path);
    this.collectExprs(step.if, [...path, 'if'], order, inLoop);
    if (Array.isArray(step.onError)) this.walkSteps(step.onError, [...path, 'onError'], inLoop);
    const action = typeof step.uses === 'string' ? step.uses : undefined;
    if (isObject(step.retry) && Array.isArray(step.retry.on)) {
      step.retry.on.forEach((sel, i) => {
        const problem = typeof sel === 'string' ? stepSelectorProblem(action, sel) : undefined;
        if (problem) this.report([...path, 'retry', 'on', i], 'value', 'retry-on', problem);
      });
    }
    switch (kind) {
      case 'uses':
        this.checkUses(step, path, order, inLoop);
        break;
      case 'forEach': {
        const fe = isObject(step.forEach) ? step.forEach : {};
        this.collectExprs(fe.items, [...path, 'forEach', 'items'], order, inLoop);
        if (Array.isArray(fe.steps)) this.walkSteps(fe.steps, [...path, 'forEach', 'steps'], true);
        break;
      }
      case 'parallel':
        if (Array.isArray(step.parallel)) this.walkSteps(step.parallel, [...path, 'parallel'], inLoop, true);
        break;
      case 'set':
        this.collectExprs(step.set, [...path, 'set'], order, inLoop);
        break;
      case 'fail':
        this.collectExprs(step.fail, [...path, 'fail'], order, inLoop);
        break;
      case 'wait':
        if (isObject(step.wait)) {
          const w = step.wait;
          if (isObject(w.event))
            this.collectExprs(w.event.match, [...path, 'wait', 'event', 'match'], order, inLoop);
          if (isObject(w.poll)) {
            const poll = w.poll;
            if (
              typeof poll.uses === 'string' &&
              this.checkActionName(poll.uses, [...path, 'wait', 'poll', 'uses'])
            ) {
              this.checkArgs(poll.uses, poll.with ?? {}, [...path, 'wait', 'poll', 'with']);
            }
            this.collectExprs(poll.with, [...path, 'wait', 'poll', 'with'], order, inLoop);
            this.collectExprs(poll.until, [...path, 'wait', 'poll', 'until'], order, inLoop);
          }
        }
        break;
    }
  }

  private checkActionName(action: string, path: Seg[]): boolean {
    if (KNOWN_ACTIONS.includes(action)) return true;
    const near = closest(action, KNOWN_ACTIONS);
    const hint = near.length ? ` (did you mean ${near.map((n) => `\`${n}\``).join(' or ')}?)` : '';
    this.report(path, 'value', 'unknown-action', `unknown action \`${action}\`${hint}`);
    return false;
  }

  private checkUses(step: Json, path: Seg[], order: number, inLoop: boolean): void {
    const action = step.uses;
    if (typeof action !== 'string' || !this.checkActionName(action, [...path, 'uses'])) return;
    const schema = withSchemaFor(action);
    const args = step.with ?? {};
    this.checkArgs(action, args, [...path, 'with']);
    this.collectExprs(step.with, [...path, 'with'], order, inLoop);
    if (isObject(step.devices)) {
      const d = step.devices;
      if (Array.isArray(d.retry)) {
        d.retry.forEach((r, i) => {
          if (!isObject(r)) return;
          if (Array.isArray(r.on)) {
            r.on.forEach((t, j) => {
              const problem = typeof t === 'string' ? deviceSelectorProblem(action, t) : undefined;
              if (problem)
                this.report([...path, 'devices', 'retry', i, 'on', j], 'value', 'retry-on', problem);
            });
          }
          if (isObject(r.with) && schema) {
            const known = (schema as { properties?: Json }).properties ?? {};
            for (const k of Object.keys(r.with)) {
              if (!(k in known))
                this.report(
                  [...path, 'devices', 'retry', i, 'with', k],
                  'key',
                  'with',
                  `${action} has no argument \`${k}\``,
                );
            }
            // The retried call is the step's arguments with these replaced: check the values it would send.
            if (isObject(args)) {
              const keys = new Set(Object.keys(r.with).filter((k) => k in known));
              this.checkArgs(action, { ...args, ...r.with }, [...path, 'devices', 'retry', i, 'with'], keys);
            }
          }
          this.collectExprs(r.with, [...path, 'devices', 'retry', i, 'with'], order, inLoop);
        });
      }
      if (Array.isArray(d.ignore)) {
        d.ignore.forEach((t, j) => {
          const problem = typeof t === 'string' ? deviceSelectorProblem(action, t) : undefined;
          if (problem) this.report([...path, 'devices', 'ignore', j], 'value', 'retry-on', problem);
        });
      }
    }
  }

  private checkIds(): void {
    const first = new Map<string, StepSite>();
    for (const s of this.steps) {
      const prior = first.get(s.id);
      if (prior) {
        const pos = this.position(prior.path.concat('id'), 'value');
        this.report(
          [...s.path, 'id'],
          'value',
          'duplicate-step-id',
          `step id \`${s.id}\` is already used at line ${pos.line}`,
        );
      } else first.set(s.id, s);
    }
  }

  // ── expressions ───────────────────────────────────────────────────────────────────────────────

  private collectExprs(value: unknown, path: Seg[], order: number, inLoop: boolean): void {
    if (typeof value === 'string') {
      if (value.includes('${{'))
        this.exprs.push({ text: value, path, order, inLoop, branch: [...this.branch] });
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => this.collectExprs(v, [...path, i], order, inLoop));
    } else if (isObject(value)) {
      for (const [k, v] of Object.entries(value)) this.collectExprs(v, [...path, k], order, inLoop);
    }
  }

  private checkExpressions(inputs: Set<string>): void {
    const order = new Map<string, number>();
    const branchOf = new Map<string, string[]>();
    for (const s of this.steps) {
      if (!order.has(s.id)) {
        order.set(s.id, s.order);
        branchOf.set(s.id, s.branch);
      }
    }
    /** True when the step runs in another branch of a parallel step that also holds this site. */
    const beside = (id: string, site: ExprSite) =>
      (branchOf.get(id) ?? []).some((b) => {
        const p = b.slice(0, b.lastIndexOf(':'));
        return site.branch.some((c) => c !== b && c.slice(0, c.lastIndexOf(':')) === p);
      });
    for (const site of this.exprs) {
      const { spans, unterminated } = findExpressions(site.text);
      // Where the string starts in the file: needed only to report something.
      let offsetOf: ((i: number) => number) | undefined;
      const base = (i: number) => (offsetOf ??= this.stringOffset(site.path, site.text))(i);
      if (unterminated !== undefined)
        this.reportOffset(base(unterminated), 'expression', 'unterminated `${{`: it needs a closing `}}`');
      for (const span of spans) {
        if (span.source === '') {
          this.reportOffset(base(span.start), 'expression', 'empty expression `${{ }}`');
          continue;
        }
        const err = checkExpression(span.source, site.inLoop);
        if (err) {
          const loopVar = LOOP_VARIABLES.find((v) => err.message === `Unknown variable: ${v}`);
          if (loopVar)
            this.reportOffset(
              base(span.offset + err.offset),
              'loop-variable',
              `\`${loopVar}\` exists only inside a forEach body`,
            );
          else
            this.reportOffset(
              base(span.offset + err.offset),
              'expression',
              `invalid expression: ${err.message}`,
            );
          continue;
        }
        const code = blankStrings(span.source);
        for (const m of code.matchAll(/\bsteps\s*\.\s*([A-Za-z_]\w*)/g)) {
          const id = m[1] as string;
          const at = order.get(id);
          const where = base(span.offset + (m.index ?? 0));
          if (at === undefined) {
            const near = closest(id, [...order.keys()]);
            this.reportOffset(
              where,
              'step-reference',
              `no step has id \`${id}\`${near.length ? ` (did you mean \`${near[0]}\`?)` : ''}`,
            );
          } else if (beside(id, site)) {
            this.reportOffset(
              where,
              'step-reference',
              `step \`${id}\` runs beside this one in a parallel step, not before it, so \`steps.${id}\` has no value here`,
            );
          } else if (site.order !== -1 && at >= site.order) {
            this.reportOffset(
              where,
              'step-reference',
              `step \`${id}\` does not run before this point, so \`steps.${id}\` has no value here`,
            );
          } else if (site.order === -1) {
            this.reportOffset(
              where,
              'step-reference',
              `\`steps.${id}\` has no value here: no step has run yet`,
            );
          }
        }
        const inputRefs = [
          ...code.matchAll(/\binputs\s*\.\s*([A-Za-z_]\w*)/g),
          ...span.source.matchAll(/\binputs\s*\[\s*["']([^"']+)["']\s*\]/g),
        ];
        for (const m of inputRefs) {
          if (!inputs.has(m[1] as string)) {
            this.reportOffset(
              base(span.offset + (m.index ?? 0)),
              'undeclared-input',
              `input \`${m[1]}\` is not declared under \`inputs\``,
            );
          }
        }
      }
    }
  }

  /** Maps an offset in a string's value to an offset in the file (exact for plain and quoted one-line scalars). */
  private stringOffset(path: Seg[], text: string): (i: number) => number {
    const node = this.nodeAt(path).node;
    const range = node?.range;
    if (!range) return () => 0;
    const raw = this.source.slice(range[0], range[1]);
    const direct = raw.indexOf(text);
    if (direct !== -1) return (i) => range[0] + direct + i;
    // Quoted or folded: walk the value and the source text together. A line break with its indentation
    // folds to one space (or to a newline in a block scalar); quotes and escape characters exist only in
    // the source.
    const map = new Int32Array(text.length + 1);
    let j = 0;
    for (let i = 0; i < text.length; i++) {
      while (j < raw.length && raw[j] !== text[i]) {
        if (raw[j] === '\n' && (text[i] === ' ' || text[i] === '\n')) break;
        j++;
      }
      map[i] = Math.min(j, raw.length);
      if (raw[j] === '\n' && text[i] !== '\n') {
        j++;
        while (raw[j] === ' ' || raw[j] === '\t') j++;
      } else if (raw[j] === '\n') {
        j++;
        while ((raw[j] === ' ' || raw[j] === '\t') && raw[j] !== text[i + 1]) j++;
      } else j++;
    }
    map[text.length] = Math.min(j, raw.length);
    return (i) => range[0] + (map[Math.max(0, Math.min(i, text.length))] ?? 0);
  }

  // ── schema problems and positions ─────────────────────────────────────────────────────────────

  private schemaProblems(schema: object, value: unknown, path: Seg[]): void {
    for (const p of check(schema, value))
      this.reportPointer(path, p.path, (p.rule as Rule | undefined) ?? 'schema', p.message);
  }

  /** Problems of an action's arguments, at `path`; with `only`, just those under those keys. */
  private checkArgs(action: string, args: unknown, path: Seg[], only?: Set<string>): void {
    const schema = withSchemaFor(action);
    if (!schema || (typeof args === 'string' && args.includes('${{'))) return;
    let compiled = withSchemas.get(action);
    if (!compiled) {
      compiled = allowExpressions(JSON.parse(JSON.stringify(schema))) as object;
      withSchemas.set(action, compiled);
    }
    for (const p of check(compiled, args)) {
      if (only) {
        const key = p.path.split('/')[1];
        if (key === undefined || !only.has(key.replace(/~1/g, '/').replace(/~0/g, '~'))) continue;
      }
      this.reportPointer(path, p.path, 'with', `${action}: ${p.message}`);
    }
  }

  /** A problem at a JSON pointer relative to `base`: the value when it exists, else the nearest key. */
  private reportPointer(base: Seg[], pointer: string, rule: Rule, message: string): void {
    const rel =
      pointer === '/'
        ? []
        : pointer
            .split('/')
            .slice(1)
            .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    const full: Seg[] = [...base, ...rel];
    const unknownField = message.startsWith('unknown field') || message.includes(': unknown field');
    this.report(full, unknownField ? 'key' : 'value', rule, message);
  }

  report(
    path: Seg[],
    where: 'key' | 'value',
    rule: Rule,
    message: string,
    severity: Severity = 'error',
  ): void {
    if (this.quick) throw FOUND;
    const { line, column } = this.position(path, where);
    this.diagnostics.push({ file: this.file, line, column, message, rule, severity });
  }

  private reportOffset(offset: number, rule: Rule, message: string, severity: Severity = 'error'): void {
    if (this.quick) throw FOUND;
    const { line, col } = this.lc.linePos(offset);
    this.diagnostics.push({ file: this.file, line, column: col, message, rule, severity });
  }

  private position(path: Seg[], where: 'key' | 'value'): { line: number; column: number } {
    const { node, keyNode, ancestorKey, ancestor } = this.nodeAt(path);
    const target = node ? (where === 'key' && keyNode ? keyNode : node) : (ancestorKey ?? ancestor);
    const offset = target?.range?.[0] ?? 0;
    const { line, col } = this.lc.linePos(offset);
    return { line, column: col };
  }

  /** The YAML node at `path`, its key node, and the deepest existing ancestor when it does not exist. */
  private nodeAt(path: Seg[]): { node?: Node; keyNode?: Node; ancestor?: Node; ancestorKey?: Node } {
    let node = this.doc?.contents as Node | null | undefined;
    let keyNode: Node | undefined;
    for (const seg of path) {
      if (node && isAlias(node) && this.doc) node = node.resolve(this.doc) as Node | undefined;
      let next: Node | undefined;
      let nextKey: Node | undefined;
      if (node && isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
        if (pair) {
          next = (pair.value as Node | null) ?? (pair.key as Node);
          nextKey = pair.key as Node;
        }
      } else if (node && isSeq(node)) {
        next = node.items[Number(seg)] as Node | undefined;
        nextKey = next;
      }
      if (!next) return { ancestor: node ?? undefined, ...(keyNode ? { ancestorKey: keyNode } : {}) };
      node = next;
      keyNode = nextKey;
    }
    return { node: node ?? undefined, ...(keyNode ? { keyNode } : {}) };
  }
}

function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function firstLine(m: string): string {
  return m.split('\n')[0]?.trim() ?? m;
}

/** The CEL source with the insides of string literals blanked, offsets kept. */
function blankStrings(src: string): string {
  return src.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, (s) => s[0] + ' '.repeat(s.length - 2) + s[0]);
}
