/**
 * The checks of a playbook's data: the schemas (through a PlaybookRules), then the semantic checks: unique
 * step ids, references to earlier steps only, expressions parsed and type-checked, declared inputs, retry
 * selectors the action can meet, cron, time zones, unreachable steps.
 *
 * Reading YAML and positioning problems is load.ts's part (a Locator). This module loads neither `yaml` nor
 * the TypeBox schemas, so that `fleetbook validate` starts fast: with the rules generated at build time
 * (generated-rules.ts) and the YAML subset reader (fast-yaml.ts), quickLoad checks a valid playbook without
 * them, and leaves everything else to load.ts.
 */
// eslint-disable-next-line no-restricted-imports -- layer exception: what a playbook may write (engine action declarations, selectors, static checks) still lives in src/actions/; it belongs below src/playbook/
import { staticProblems } from '../actions/policy.js';
import type { InputProblem } from '../errors.js';
import { closest } from '../util/closest.js';
import type { Diagnostic, Rule, Severity } from './diagnostics.js';
import { firesKey } from './cron.js';
import { scheduleKey, scheduleProblems } from './schedule.js';
import type { Playbook } from './schema.js';
import { STEP_KINDS, type StepKind } from './step-kinds.js';
import { stepDurationProblems } from './duration.js';
import { declarationProblems, ungivenInputProblems } from './input-constraints.js';
import {
  argsOf,
  checkExpressions,
  CONDITION,
  ITEMS,
  MATCH,
  UNTIL,
  type ExprSite,
  type Expected,
  type StepSite,
} from './expression-checks.js';
import { TypeScope, type EventContext } from './types-env.js';
import { listingActions } from './types.js';
import { isObject } from '../util/json.js';

export type Seg = string | number;
type Json = Record<string, unknown>;

export interface LoadedPlaybook {
  file: string;
  source: string;
  /** Present when there is no error (warnings allowed). */
  playbook?: Playbook;
  diagnostics: Diagnostic[];
}

/** What the checks need from the playbook language and the action catalog. */
export interface PlaybookRules {
  /** Every action a step may use. */
  readonly actions: readonly string[];
  /** Problems of the top level against the loader's schema (steps are checked one by one). */
  top(playbook: Json): InputProblem[];
  /** Problems of one step against the schema of its kind (nested steps are checked one by one). */
  step(kind: StepKind, step: Json): InputProblem[];
  /** Problems of an action's arguments (an expression allowed in place of any value); none without a schema. */
  args(action: string, args: unknown): InputProblem[];
  /** The argument schema's `properties`, tested with `in`; undefined when the action has no schema. */
  argKeys(action: string): object | undefined;
  /** Why `selector` can never match an error of `action` in a step `retry.on`; undefined when it can. */
  stepSelectorProblem(action: string | undefined, selector: string): string | undefined;
  /** Why `type` cannot be a per-device error of `action`; undefined when it can. */
  deviceSelectorProblem(action: string | undefined, type: string): string | undefined;
  /** Why a step of `action` cannot say `confirm:`; undefined when it can. */
  confirmProblem(action: string): string | undefined;
  /** Why a step of `action` cannot say `wait: { for: completion }`; undefined when it can. */
  completionProblem(action: string): string | undefined;
  /** Why a wait's `poll` cannot call `action`; undefined when it can. */
  pollProblem(action: string): string | undefined;
}

/** Where things are in the source, for the problems found. */
export interface Locator {
  /** The node at `path` (its key, or its value), or the nearest existing ancestor. */
  position(path: Seg[], where: 'key' | 'value'): { line: number; column: number };
  linePos(offset: number): { line: number; col: number };
  /** Maps an offset in the string value at `path` to an offset in the file. */
  stringOffset(path: Seg[], text: string): (i: number) => number;
}

/**
 * Actions whose `step` argument names a step of this playbook that runs before (ledger.query's names a step of
 * the queried runs, which an earlier version of the playbook may have had).
 */
const STEP_ARGS = new Set(['report.write']);

export class Checker {
  readonly diagnostics: Diagnostic[] = [];
  private steps: StepSite[] = [];
  private exprs: ExprSite[] = [];
  /** Literal step names in arguments (`step: report`). */
  private stepArgs: ExprSite[] = [];
  private order = 0;
  private branch: string[] = [];
  /** Why the steps walked now run side by side with others like them (a forEach's concurrency, a parallel). */
  private sideBySide: { why: string; own: string }[] = [];

  constructor(
    private readonly file: string,
    private readonly rules: PlaybookRules,
    private readonly at: Locator,
  ) {}

  // ── the checks ────────────────────────────────────────────────────────────────────────────────

  checkPlaybook(pb: Json): void {
    this.schemaProblems(this.rules.top(pb), []);
    const inputs = isObject(pb.inputs) ? pb.inputs : {};
    for (const [name, decl] of Object.entries(inputs)) this.checkInput(name, decl);
    for (const p of ungivenInputProblems(inputs, pb.on)) this.report(p.path, p.where, 'input', p.message);
    this.checkTriggers(pb.on);
    if (isObject(pb.vars)) this.collectExprs(pb.vars, ['vars'], -1, false);
    if (isObject(pb.concurrency)) this.collectExprs(pb.concurrency.key, ['concurrency', 'key'], -1, false);
    if (Array.isArray(pb.steps)) this.walkSteps(pb.steps, ['steps'], false);
    if (Array.isArray(pb.finally)) this.walkSteps(pb.finally, ['finally'], false);
    this.checkIds();
    checkExpressions(
      { steps: this.steps, exprs: this.exprs, stepArgs: this.stepArgs },
      new Set(Object.keys(inputs)),
      new TypeScope(pb),
      this.at,
      this,
    );
  }

  /** A declaration that contradicts itself, or a default or an enum value that breaks it (input-constraints.ts). */
  private checkInput(name: string, decl: unknown): void {
    for (const p of declarationProblems(name, decl)) this.report(p.path, p.where, 'input', p.message);
  }

  private checkTriggers(on: unknown): void {
    if (!isObject(on)) return;
    const list = (v: unknown) => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
    const multi = (key: string, i: number): Seg[] => (Array.isArray(on[key]) ? ['on', key, i] : ['on', key]);
    // Each entry's `if` is evaluated on its own service's callbacks only (daemon/matcher.ts): their event alone.
    list(on.callback).forEach((cb, i) => {
      if (!isObject(cb)) return;
      const service = typeof cb.service === 'string' ? cb.service : undefined;
      const event = service === undefined ? undefined : { service };
      this.collectExprs(cb.if, [...multi('callback', i), 'if'], -1, false, event, CONDITION);
    });
    /** The place of each schedule by what the daemon keys it by (its time zone and text), and by what it fires. */
    const seen = new Map<string, number>();
    const fires = new Map<string, number>();
    list(on.schedule).forEach((s, i) => {
      if (!isObject(s)) return;
      const problems = scheduleProblems(s);
      for (const p of problems)
        this.report([...multi('schedule', i), p.key], 'value', p.rule, p.message, p.severity);
      if (typeof s.cron !== 'string') return;
      const timezone = typeof s.timezone === 'string' ? s.timezone : undefined;
      const key = scheduleKey('', { cron: s.cron, timezone });
      const first = seen.get(key);
      if (first !== undefined) {
        this.report(
          [...multi('schedule', i), 'cron'],
          'value',
          'schedule-duplicate',
          `schedule ${JSON.stringify(s.cron)} is given twice (also at on.schedule[${first}]): the daemon fires it once; remove one`,
        );
        return;
      }
      seen.set(key, i);
      // Written otherwise, the same fires are another schedule to the daemon: two runs at each of them.
      const same = problems.some((p) => p.severity === 'error') ? undefined : firesKey(s.cron, timezone);
      if (same === undefined) return;
      const other = fires.get(same);
      if (other === undefined) fires.set(same, i);
      else {
        const cron = (list(on.schedule)[other] as Json).cron;
        this.report(
          [...multi('schedule', i), 'cron'],
          'value',
          'schedule-duplicate',
          `schedule ${JSON.stringify(s.cron)} fires at the same times as on.schedule[${other}] (${JSON.stringify(cron)}), in the same time zone: the daemon would start two runs at each of them; remove one`,
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
    const kinds = STEP_KINDS.filter((k) => k in step);
    // `wait` beside `uses` means "wait for completion", not a wait step.
    const kind = kinds[0];
    if (typeof step.id === 'string') {
      const action = typeof step.uses === 'string' ? step.uses : undefined;
      this.steps.push({
        id: step.id,
        path,
        order,
        inLoop,
        branch: [...this.branch],
        action,
        kind: kind ?? 'step',
        ...(kind === 'forEach' && isObject(step.forEach)
          ? { loop: { items: step.forEach.items, batchSize: step.forEach.batchSize } }
          : {}),
      });
    }
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
    this.schemaProblems(this.rules.step(kind, step), path);
    this.checkDurations(step, path);
    this.collectExprs(step.if, [...path, 'if'], order, inLoop, undefined, CONDITION);
    if (Array.isArray(step.onError)) this.walkSteps(step.onError, [...path, 'onError'], inLoop);
    const action = typeof step.uses === 'string' ? step.uses : undefined;
    // A misspelt action is said once (checkUses): what its retry could meet is not known.
    const knownAction = action === undefined || this.rules.actions.includes(action);
    if (knownAction && isObject(step.retry) && Array.isArray(step.retry.on)) {
      step.retry.on.forEach((sel, i) => {
        const problem = typeof sel === 'string' ? this.rules.stepSelectorProblem(action, sel) : undefined;
        if (problem) this.report([...path, 'retry', 'on', i], 'value', 'retry-on', problem);
      });
    }
    switch (kind) {
      case 'uses':
        this.checkUses(step, path, order, inLoop);
        break;
      case 'forEach': {
        const fe = isObject(step.forEach) ? step.forEach : {};
        this.collectExprs(fe.items, [...path, 'forEach', 'items'], order, inLoop, undefined, ITEMS);
        const many = typeof fe.concurrency === 'number' && fe.concurrency > 1;
        if (many)
          this.sideBySide.push({
            why: `forEach \`${String(step.id)}\` runs ${fe.concurrency} iterations at once`,
            own: "what is an iteration's own is in `item`, `index` and its steps' outputs",
          });
        if (Array.isArray(fe.steps)) this.walkSteps(fe.steps, [...path, 'forEach', 'steps'], true);
        if (many) this.sideBySide.pop();
        break;
      }
      case 'parallel':
        this.sideBySide.push({
          why: `the branches of parallel \`${String(step.id)}\` run at once`,
          own: "what is a branch's own is in its steps' outputs",
        });
        if (Array.isArray(step.parallel)) this.walkSteps(step.parallel, [...path, 'parallel'], inLoop, true);
        this.sideBySide.pop();
        break;
      case 'set': {
        this.collectExprs(step.set, [...path, 'set'], order, inLoop);
        const side = this.sideBySide[this.sideBySide.length - 1];
        if (side)
          this.report(
            [...path, 'set'],
            'key',
            'shared-vars',
            `${side.why}, and they share the run's \`vars\`: a later step may read what another one set here; ${side.own}`,
            'warning',
          );
        break;
      }
      case 'fail':
        this.collectExprs(step.fail, [...path, 'fail'], order, inLoop);
        break;
      case 'wait':
        if (isObject(step.wait)) {
          const w = step.wait;
          if (isObject(w.event)) {
            const service = typeof w.event.service === 'string' ? w.event.service : undefined;
            this.collectExprs(
              w.event.match,
              [...path, 'wait', 'event', 'match'],
              order,
              inLoop,
              { service },
              MATCH,
            );
          }
          if (isObject(w.poll)) {
            const poll = w.poll;
            if (
              typeof poll.uses === 'string' &&
              this.checkActionName(poll.uses, [...path, 'wait', 'poll', 'uses'])
            ) {
              this.checkArgs(poll.uses, poll.with ?? {}, [...path, 'wait', 'poll', 'with']);
              const problem = this.rules.pollProblem(poll.uses);
              if (problem) this.report([...path, 'wait', 'poll', 'uses'], 'value', 'poll', problem);
            }
            this.collectExprs(
              poll.with,
              [...path, 'wait', 'poll', 'with'],
              order,
              inLoop,
              undefined,
              argsOf(poll.uses),
            );
            const action = typeof poll.uses === 'string' ? poll.uses : undefined;
            this.collectExprs(
              poll.until,
              [...path, 'wait', 'poll', 'until'],
              order,
              inLoop,
              { action },
              UNTIL,
            );
          }
        }
        break;
    }
  }

  /** The step's durations: none longer than MAX_DURATION, none zero where zero cannot work. */
  private checkDurations(step: Json, path: Seg[]): void {
    for (const p of stepDurationProblems(step))
      this.report([...path, ...p.at], 'value', 'duration', p.message);
  }

  private checkActionName(action: string, path: Seg[]): boolean {
    if (this.rules.actions.includes(action)) return true;
    const near = closest(action, this.rules.actions);
    const hint = near.length ? ` (did you mean ${near.map((n) => `\`${n}\``).join(' or ')}?)` : '';
    this.report(path, 'value', 'unknown-action', `unknown action \`${action}\`${hint}`);
    return false;
  }

  private checkUses(step: Json, path: Seg[], order: number, inLoop: boolean): void {
    const action = step.uses;
    if (typeof action !== 'string' || !this.checkActionName(action, [...path, 'uses'])) return;
    const known = this.rules.argKeys(action);
    const args = step.with ?? {};
    this.checkArgs(action, args, [...path, 'with']);
    this.collectExprs(step.with, [...path, 'with'], order, inLoop, undefined, argsOf(action));
    if (
      STEP_ARGS.has(action) &&
      isObject(args) &&
      typeof args.step === 'string' &&
      !args.step.includes('${{')
    )
      this.stepArgs.push({
        text: args.step,
        path: [...path, 'with', 'step'],
        order,
        inLoop,
        branch: [...this.branch],
      });
    if (step.confirm !== undefined) {
      const problem = this.rules.confirmProblem(action);
      if (problem) this.report([...path, 'confirm'], 'key', 'confirm', problem);
    }
    if (step.wait !== undefined) {
      const problem = this.rules.completionProblem(action);
      if (problem) this.report([...path, 'wait'], 'key', 'completion', problem);
    }
    if (step.items !== undefined && !listingActions().includes(action)) {
      const listings = listingActions().join(', ');
      const problem = `\`items\` chooses the identifier by which a device listing (${listings}) makes each listed device an item; \`${action}\` lists no devices`;
      this.report([...path, 'items'], 'key', 'items-kind', problem);
    }
    if (isObject(step.devices)) {
      const d = step.devices;
      if (Array.isArray(d.retry)) {
        d.retry.forEach((r, i) => {
          if (!isObject(r)) return;
          if (Array.isArray(r.on)) {
            r.on.forEach((t, j) => {
              const problem = typeof t === 'string' ? this.rules.deviceSelectorProblem(action, t) : undefined;
              if (problem)
                this.report([...path, 'devices', 'retry', i, 'on', j], 'value', 'retry-on', problem);
            });
          }
          if (isObject(r.with) && known) {
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
          const problem = typeof t === 'string' ? this.rules.deviceSelectorProblem(action, t) : undefined;
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
        const pos = this.at.position(prior.path.concat('id'), 'value');
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

  /**
   * The expressions in `value` (at `path`), to be checked once every step is known. `expect` says what the
   * field at a path below `path` takes, for a value that is one whole expression.
   */
  private collectExprs(
    value: unknown,
    path: Seg[],
    order: number,
    inLoop: boolean,
    event?: EventContext,
    expect?: (below: Seg[]) => Expected | undefined,
    below: Seg[] = [],
  ): void {
    if (typeof value === 'string') {
      if (!value.includes('${{')) return;
      const expected = expect?.(below);
      this.exprs.push({
        text: value,
        path,
        order,
        inLoop,
        branch: [...this.branch],
        ...(event ? { event } : {}),
        ...(expected ? { expect: expected } : {}),
      });
    } else if (Array.isArray(value)) {
      value.forEach((v, i) =>
        this.collectExprs(v, [...path, i], order, inLoop, event, expect, [...below, i]),
      );
    } else if (isObject(value)) {
      for (const [k, v] of Object.entries(value))
        this.collectExprs(v, [...path, k], order, inLoop, event, expect, [...below, k]);
    }
  }

  // ── schema problems and reports ───────────────────────────────────────────────────────────────

  private schemaProblems(problems: InputProblem[], path: Seg[]): void {
    for (const p of problems)
      this.reportPointer(path, p, (p.rule as Rule | undefined) ?? 'schema', p.message);
  }

  /** Problems of an action's arguments, at `path`; with `only`, just those under those keys. */
  private checkArgs(action: string, args: unknown, path: Seg[], only?: Set<string>): void {
    if (typeof args === 'string' && args.includes('${{')) return;
    for (const p of this.rules.args(action, args)) {
      const segs = p.path
        .split('/')
        .slice(1)
        .map((x) => x.replace(/~1/g, '/').replace(/~0/g, '~'));
      if (only && (segs[0] === undefined || !only.has(segs[0]))) continue;
      let message = p.message;
      if (p.asText !== undefined) {
        // `cacheMode: 0` is the number 0 to YAML: the schema wants the string "0" (api/validate.ts, asText).
        const value = segs.reduce<unknown>(
          (v, k) => (isObject(v) || Array.isArray(v) ? (v as Json)[k] : undefined),
          args,
        );
        message = `${segs.join('.')} must be a string, and YAML reads ${p.asText} as a ${typeof value}: quote it ('${p.asText}')`;
      }
      this.reportPointer(path, p, 'with', `${action}: ${message}`);
    }
    // Where the engine actions may write and what they may send, for the literal values (actions/policy.ts).
    if (!only)
      for (const p of staticProblems(action, args))
        this.report([...path, ...p.path], p.where, p.rule, p.message, p.severity);
  }

  /** A problem at its JSON pointer relative to `base`: at the name when the name is at fault, else the value. */
  private reportPointer(base: Seg[], p: InputProblem, rule: Rule, message: string): void {
    const rel =
      p.path === '/'
        ? []
        : p.path
            .split('/')
            .slice(1)
            .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    this.report([...base, ...rel], p.name ? 'key' : 'value', rule, message);
  }

  report(
    path: Seg[],
    where: 'key' | 'value',
    rule: Rule,
    message: string,
    severity: Severity = 'error',
  ): void {
    const { line, column } = this.at.position(path, where);
    this.diagnostics.push({ file: this.file, line, column, message, rule, severity });
  }

  reportOffset(offset: number, rule: Rule, message: string, severity: Severity = 'error'): void {
    const { line, col } = this.at.linePos(offset);
    this.diagnostics.push({ file: this.file, line, column: col, message, rule, severity });
  }
}
