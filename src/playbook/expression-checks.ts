/**
 * The checks of a playbook's expressions, once every step and expression site is collected (checker.ts): each
 * parses and type-checks (types-check.ts), `item` in a forEach body of the type of the loop's items, names only
 * declared inputs, and refers only to steps that run before it; and the arguments that name a step
 * (`step: report`) name one that does.
 */
import { checkExpression, LOOP_VARIABLES } from '../expressions/cel.js';
import { readsOf } from '../expressions/reads.js';
import { findExpressions, type Span } from '../expressions/template.js';
import { closest, nearValues } from '../util/closest.js';
import { envInstead, envWithheld } from '../util/secrets.js';
import type { Locator, Seg } from './checker.js';
import { DURATION_PATTERN } from './duration.js';
import type { Rule, Severity } from './diagnostics.js';
import { notAllowed } from './known-values.js';
import { typeOf, type TypeProblem, type Typed } from './types-check.js';
import type { EventContext, TypeScope } from './types-env.js';
import {
  BOOL,
  DURATION_SENT,
  DYN,
  fits,
  fromValue,
  givesItems,
  givesResults,
  inputFieldType,
  list,
  listingActions,
  typeName,
  type T,
} from './types.js';

export interface StepSite {
  id: string;
  path: Seg[];
  order: number;
  inLoop: boolean;
  /** The parallel branches it is inside, as `<parallel path>:<branch>`. */
  branch: string[];
  /** A `uses` step's action. */
  action?: string | undefined;
  /** What kind of step it is (`uses`, `forEach`, `wait`...). */
  kind: string;
  /** A forEach's `items` and `batchSize`, as written. */
  loop?: { items: unknown; batchSize: unknown };
}

export interface ExprSite {
  text: string;
  path: Seg[];
  /** Pre-order position of the step that owns the field; steps before it may be referenced. */
  order: number;
  inLoop: boolean;
  branch: string[];
  /** What `event` is here when it is not the playbook's callback: a waited-for callback, a poll's answer. */
  event?: EventContext;
  /** What the field takes, checked when its value is one whole expression (which keeps its type). */
  expect?: Expected;
}

/** The type a field takes, and the field as a message names it (`` `if` ``, `` `accountName` of devices.list ``). */
export interface Expected {
  type: T;
  what: string;
}

/** What a condition takes, only at its root. */
const rootOnly =
  (expected: Expected) =>
  (below: Seg[]): Expected | undefined =>
    below.length ? undefined : expected;
export const CONDITION = rootOnly({ type: BOOL, what: '`if`' });
export const MATCH = rootOnly({ type: BOOL, what: '`match`' });
export const UNTIL = rootOnly({ type: BOOL, what: '`until`' });
export const ITEMS = rootOnly({ type: list(DYN), what: '`forEach.items`' });

/** What each member of `action`'s arguments takes, from its input schema. */
export const argsOf =
  (action: unknown) =>
  (below: Seg[]): Expected | undefined =>
    typeof action === 'string' && below.length
      ? { type: inputFieldType(action, below), what: `\`${below.join('.')}\` of ${action}` }
      : undefined;

/** Everything the checks look at, as the checker collected it. */
export interface Sites {
  steps: readonly StepSite[];
  exprs: readonly ExprSite[];
  /** Literal step names in arguments (`step: report`). */
  stepArgs: readonly ExprSite[];
}

/** Where the problems go: at a path of the data, or at an offset in the file. */
export interface Reporter {
  report(path: Seg[], where: 'key' | 'value', rule: Rule, message: string): void;
  reportOffset(offset: number, rule: Rule, message: string, severity?: Severity): void;
}

export function checkExpressions(
  sites: Sites,
  inputs: Set<string>,
  types: TypeScope,
  at: Locator,
  out: Reporter,
): void {
  /** Each step id's site: the first, where two steps share an id (refused elsewhere). */
  const stepOf = new Map<string, StepSite>();
  for (const s of sites.steps) if (!stepOf.has(s.id)) stepOf.set(s.id, s);
  /** True when the step runs in another branch of a parallel step that also holds this site. */
  const beside = (id: string, site: ExprSite) =>
    (stepOf.get(id)?.branch ?? []).some((b) => {
      const p = b.slice(0, b.lastIndexOf(':'));
      return site.branch.some((c) => c !== b && c.slice(0, c.lastIndexOf(':')) === p);
    });
  /** Why `steps.<id>` (or `step: <id>`) has no value at `site`; undefined when it has one. */
  const stepProblem = (id: string, site: ExprSite): string | undefined => {
    const at = stepOf.get(id)?.order;
    if (at === undefined) {
      const near = closest(id, [...stepOf.keys()]);
      return `no step has id \`${id}\`${near.length ? ` (did you mean \`${near[0]}\`?)` : ''}`;
    }
    if (beside(id, site))
      return `step \`${id}\` runs beside this one in a parallel step, not before it, so \`steps.${id}\` has no value here`;
    if (site.order !== -1 && at >= site.order)
      return `step \`${id}\` does not run before this point, so \`steps.${id}\` has no value here`;
    if (site.order === -1) return `\`steps.${id}\` has no value here: no step has run yet`;
    return undefined;
  };
  /** The forEach steps by the path of their body (`...forEach.steps`). */
  const loopOf = new Map<string, StepSite>();
  for (const s of sites.steps)
    if (s.kind === 'forEach') loopOf.set(JSON.stringify([...s.path, 'forEach', 'steps']), s);
  /**
   * What is wrong with reading `steps.<step.id>.<members>` at `site`, after the forEach steps that hold the step
   * ended (runner/after-loop.ts): its output (each iteration had its own), or items not known there (a listing's
   * or ledger query's, each iteration found its own; any after a loop inside another).
   */
  const afterLoop = (step: StepSite, site: ExprSite, members: string[]) => {
    const loops: StepSite[] = [];
    step.path.forEach((seg, i) => {
      if (seg !== 'forEach' || step.path[i + 1] !== 'steps') return;
      const loop = loopOf.get(JSON.stringify(step.path.slice(0, i + 2)));
      if (loop) loops.push(loop);
    });
    const ended = loops.findIndex((l) => !isUnder(site.path, [...l.path, 'forEach', 'steps']));
    const loop = loops[ended];
    if (!loop) return undefined;
    const read = `\`steps.${step.id}.${members[0]}\``;
    if (members[0] === 'output')
      return {
        rule: 'member' as const,
        message: `${read} has no value after forEach \`${loop.id}\`: each of its iterations had its own; read it inside the loop (the loop's own, \`steps.${loop.id}.output\`, is \`{ iterations, failed }\`)`,
      };
    if (members[0] !== 'items' || !givesItems(step.action)) return undefined;
    if (isListing(step) || step.action === 'ledger.query')
      return {
        rule: 'step-items' as const,
        message: `${read} cannot be read after forEach \`${loop.id}\`: each of its iterations found its own, and they are not kept together; read them inside the loop`,
      };
    const outermost = loops[0] as StepSite;
    if (ended === 0) return undefined;
    return {
      rule: 'step-items' as const,
      message: `${read} cannot be read after forEach \`${loop.id}\`, which runs inside forEach \`${outermost.id}\`: its per-device results over every iteration are read from the ledger only after \`${outermost.id}\`; read them inside the loop, or after \`${outermost.id}\``,
    };
  };
  /** The forEach whose body holds `path`, the innermost; undefined outside one (or one without an id). */
  const loopAround = (path: Seg[]): StepSite | undefined => {
    for (let i = path.length - 2; i >= 0; i--) {
      if (path[i] !== 'forEach' || path[i + 1] !== 'steps') continue;
      const loop = loopOf.get(JSON.stringify(path.slice(0, i + 2)));
      if (loop) return loop;
    }
    return undefined;
  };
  const items = new Map<StepSite, T>();
  /** The type of `item` in the body of `loop`, from its `items` (each of them, or a list of them per batch). */
  const itemOf = (loop: StepSite): T => {
    let t = items.get(loop);
    if (t === undefined) {
      const of = itemsType(loop.loop?.items, loop.inLoop, (source) =>
        typeOf(source, loop.inLoop, envAt({ path: loop.path, inLoop: loop.inLoop })),
      );
      const each = of.k === 'list' ? of.of : DYN;
      const batch = loop.loop?.batchSize;
      t = typeof batch === 'number' && batch > 0 ? list(each) : each;
      items.set(loop, t);
    }
    return t;
  };
  /** The variables' types at a site: its `event`, `vars` in the values of `vars`, `item` in a loop body. */
  function envAt(site: Pick<ExprSite, 'path' | 'inLoop' | 'event'>) {
    const loop = site.inLoop ? loopAround(site.path) : undefined;
    const item = site.inLoop ? (loop ? itemOf(loop) : DYN) : undefined;
    return types.env(site.event, site.path[0] === 'vars', item);
  }
  for (const a of sites.stepArgs) {
    const problem = stepProblem(a.text, a);
    if (problem) out.report(a.path, 'value', 'step-reference', problem);
    else if (!givesResults(stepOf.get(a.text)?.action))
      out.report(a.path, 'value', 'step-items', resultsProblem(a.text));
  }
  for (const site of sites.exprs) {
    const { spans, unterminated } = findExpressions(site.text);
    // Where the string starts in the file: needed only to report something.
    let offsetOf: ((i: number) => number) | undefined;
    const base = (i: number) => (offsetOf ??= at.stringOffset(site.path, site.text))(i);
    if (unterminated !== undefined)
      out.reportOffset(base(unterminated), 'expression', 'unterminated `${{`: it needs a closing `}}`');
    let parsed = unterminated === undefined;
    let mismatched = false;
    for (const span of spans) {
      if (span.source === '') {
        out.reportOffset(base(span.start), 'expression', 'empty expression `${{ }}`');
        parsed = false;
        continue;
      }
      const err = checkExpression(span.source, site.inLoop);
      if (err) {
        parsed = false;
        const loopVar = LOOP_VARIABLES.find((v) => err.message === `Unknown variable: ${v}`);
        if (loopVar)
          out.reportOffset(
            base(span.offset + err.offset),
            'loop-variable',
            `\`${loopVar}\` exists only inside a forEach body`,
          );
        else
          out.reportOffset(
            base(span.offset + err.offset),
            'expression',
            `invalid expression: ${err.message}`,
          );
        continue;
      }
      const reads = readsOf(span.source);
      // Rendered before the run has them (a concurrency key, a callback filter): said once, nothing else.
      const early = renderedEarly(site.path);
      // A step read has its own message (step-reference): no step has run yet.
      const unknown = early
        ? reads.variables.filter((v) => v.name !== 'steps' && !early.reads.includes(v.name))
        : [];
      for (const v of unknown)
        out.reportOffset(
          base(span.offset + v.at),
          'expression',
          `\`${v.name}\` has no value here: ${early?.why}`,
        );
      if (unknown.length) continue;
      // A step it reads that has no value here: what type the expression would have is beside the point.
      let unread = false;
      for (const { id, members, at: index } of reads.steps) {
        const problem = stepProblem(id, site);
        const after = problem ? undefined : afterLoop(stepOf.get(id)!, site, members);
        unread ||= problem !== undefined || after !== undefined;
        if (problem) out.reportOffset(base(span.offset + index), 'step-reference', problem);
        else if (after) out.reportOffset(base(span.offset + index), after.rule, after.message);
        else if (isListing(stepOf.get(id)) && members[0] === 'output' && members[1] === 'devices')
          out.reportOffset(base(span.offset + index), 'listing-records', recordsWarning(id), 'warning');
        else if (members[0] === 'items' && !givesItems(stepOf.get(id)?.action))
          out.reportOffset(base(span.offset + index), 'step-items', itemsProblem(id, stepOf.get(id)!));
      }
      for (const { name, at: index } of reads.inputs) {
        if (!inputs.has(name)) {
          const near = closest(name, [...inputs]);
          out.reportOffset(
            base(span.offset + index),
            'undeclared-input',
            `input \`${name}\` is not declared under \`inputs\`${near.length ? ` (did you mean \`${near[0]}\`?)` : ''}`,
          );
        }
      }
      for (const { name, at: index } of reads.env) {
        const why = envWithheld(name);
        if (why)
          out.reportOffset(
            base(span.offset + index),
            'member',
            `\`env.${name}\` is withheld from expressions: ${why}; ${envInstead(name)}`,
          );
      }
      const typed = typeOf(span.source, site.inLoop, envAt(site));
      for (const p of typed.problems)
        out.reportOffset(
          base(span.offset + p.offset),
          p.rule,
          p.message + otherServices(site, span.source, p, types),
        );
      const whole = spans.length === 1 && span.start === 0 && span.end === site.text.length;
      if (whole && site.expect && !typed.problems.length && !unread && !fits(typed.type, site.expect.type)) {
        // One mistake, one error: the values of an expression of the wrong type are not checked again.
        mismatched = true;
        out.reportOffset(
          base(span.start),
          'type',
          `${site.expect.what} takes ${typeName(site.expect.type, true)}; this expression gives ${typeName(typed.type, true)}${mismatchHint(span.source.trim(), typed.type, site.expect.type, site.inLoop ? loopAround(site.path) : undefined)}`,
        );
      }
    }
    if (parsed && !mismatched && site.expect) checkEnum(site, site.expect, spans, base, out);
  }
}

/**
 * An argument that takes one of a list of values (texts or numbers), given an expression whose value is known
 * before the run (a literal, a conditional's branch): each such value not in the list, as the schema refuses a
 * plain literal.
 */
function checkEnum(
  site: ExprSite,
  expect: Expected,
  spans: Span[],
  base: (i: number) => number,
  out: Reporter,
): void {
  const wanted = expect.type;
  const values = 'enum' in wanted ? wanted.enum : undefined;
  if (!values) return;
  const whole = spans.length === 1 && spans[0]?.start === 0 && spans[0].end === site.text.length;
  const byOffset = new Map<number, unknown[]>();
  for (const k of notAllowed(site.text, spans, values, site.inLoop))
    byOffset.set(k.at, [...(byOffset.get(k.at) ?? []), k.value]);
  const allowed = values.map((v) => JSON.stringify(v)).join(', ');
  for (const [at, given] of byOffset) {
    const texts = given.map((v) => JSON.stringify(v)).join(' or ');
    // A near miss only for one value given: for several, which one it would be for is unclear.
    const near = given.length === 1 ? nearValues(given[0], values) : '';
    out.reportOffset(
      base(at),
      'with',
      `${expect.what} must be ${values.length === 1 ? '' : 'one of '}${allowed}; this ${whole ? 'expression' : 'text'} gives ${texts}${near}`,
    );
  }
}

/**
 * What to write instead, where a whole expression gives what a field does not take: `string(...)` of a
 * timestamp; a duration's text where it is none of what the field takes; a duration with its unit; a device
 * whole rather than its `id`, devices rather than a list of their members; the items of a batch one by one.
 */
function mismatchHint(source: string, given: T, wanted: T, loop: StepSite | undefined): string {
  if (given.k === 'timestamp' && wanted.k === 'string')
    return `: write \`string(...)\` of it, which gives its RFC 3339 text (\`2026-01-05T00:00:00Z\`)`;
  if (given.k === 'duration' && wanted.k === 'string') return durationHint(source, wanted);
  if (
    (given.k === 'int' || given.k === 'number') &&
    wanted.k === 'string' &&
    wanted.pattern === DURATION_PATTERN
  )
    return `: a duration is text with its unit: write \`"\${{ ${source} }}h"\` for hours, or pass a \`duration(...)\` whole`;
  const isDevice = (t: T) => t.k === 'object' && 'id' in t.fields && 'kind' in t.fields;
  const whole = /^(.*\S)\s*\.\s*id$/.exec(source)?.[1];
  if (isDevice(wanted) && given.k === 'string' && whole !== undefined)
    return `: a device is given as \`{ id, kind }\`, as a listing's items are: pass \`\${{ ${whole} }}\` whole, not its \`id\``;
  if (wanted.k === 'list' && isDevice(wanted.of) && given.k === 'list' && given.of.k !== 'object') {
    const map = /^(.*\S)\s*\.\s*map\(\s*(\w+)\s*,\s*(.*)\)$/s.exec(source);
    const each = map && /^(\w+)\s*\.\s*(\w+)$/.exec(map[3]?.trim() ?? '');
    const devices = map?.[1];
    if (devices !== undefined && each?.[1] === map?.[2])
      return `: each device is given as \`{ id, kind }\`, as a listing's items are: pass \`\${{ ${devices} }}\` whole, not a list of each one's \`${each?.[2] ?? 'id'}\``;
    return `: each device is given as \`{ id, kind }\`, as a listing's items are: pass the items whole (\`\${{ steps.<id>.items }}\`), or make each one \`{"id": ..., "kind": ...}\``;
  }
  const batch = loop?.loop?.batchSize;
  if (source === 'item' && given.k === 'list' && typeof batch === 'number')
    return `: with \`batchSize: ${batch}\`, \`item\` is a batch, a list of up to ${batch} items, not one`;
  return '';
}

/**
 * Why a duration passed whole is none of what a string field takes: it is sent as a playbook duration, its
 * seconds with the milliseconds of a fraction (`86400s`, `1s500ms`, expressions/boundary.ts), and the field's
 * schema refuses that text.
 */
function durationHint(source: string, wanted: Extract<T, { k: 'string' }>): string {
  const [whole, fraction] = DURATION_SENT;
  const sent = `: a duration is sent as its seconds (\`${whole}\`, \`${fraction}\` with a fraction)`;
  if (wanted.format === 'date-time')
    return `${sent}, which is no time: to send a time that far from another, add it to a timestamp or take it from one, and write its text (\`string(timestamp(run.startedAt) - ${source})\`)`;
  if (wanted.enum)
    return `${sent}, which is not one of ${wanted.enum.map((v) => `\`${v}\``).join(', ')}: write one of them`;
  if (wanted.format !== undefined) return `${sent}, which is no ${wanted.format}`;
  return `${sent}, which does not match \`${wanted.pattern ?? ''}\``;
}

/**
 * The type of a forEach's `items` as written: a list written in the playbook, its values' (an expression in it
 * is dyn); one whole expression that checks clean, the type `typed` gives it; anything else, dyn.
 */
function itemsType(items: unknown, inLoop: boolean, typed: (source: string) => Typed): T {
  if (typeof items !== 'string') return fromValue(items);
  const { spans, unterminated } = findExpressions(items);
  const [span] = spans;
  if (
    unterminated !== undefined ||
    spans.length !== 1 ||
    !span ||
    span.start !== 0 ||
    span.end !== items.length
  )
    return DYN;
  if (span.source === '' || checkExpression(span.source, inLoop)) return DYN;
  const t = typed(span.source);
  return t.problems.length ? DYN : t.type;
}

/**
 * What an expression can read where it is rendered before the run has its other variables: a concurrency key
 * as the daemon accepts the run (daemon/pool.ts), a callback's filter on the callback alone (daemon/matcher.ts).
 */
function renderedEarly(path: Seg[]): { reads: string[]; why: string } | undefined {
  if (path[0] === 'concurrency')
    return {
      reads: ['event', 'inputs'],
      why: '`concurrency.key` is rendered as the daemon accepts the run, before it starts, from `event` and `inputs` only',
    };
  if (path[0] === 'on' && path[1] === 'callback')
    return {
      reads: ['event'],
      why: '`on.callback.if` is evaluated on the callback, before any run exists: it reads only `event`',
    };
  return undefined;
}

/**
 * Where an `on.callback` entry's `if` reads a member its service's event does not have: the playbook's other
 * callback services whose event has it, which this `if` never sees (each entry filters its own service's).
 */
function otherServices(site: ExprSite, source: string, p: TypeProblem, types: TypeScope): string {
  const own = site.event?.service;
  if (p.rule !== 'member' || own === undefined || site.path[0] !== 'on' || site.path[1] !== 'callback')
    return '';
  const having = types
    .callbackServices()
    .filter(
      (s) =>
        s !== own &&
        !typeOf(source, false, types.env({ service: s })).problems.some((q) => q.offset === p.offset),
    );
  if (!having.length) return '';
  const whose = having.map((s) => `${s}'s`).join(' and ');
  return `: this \`if\` is evaluated on ${own} callbacks only; ${whose} event${having.length > 1 ? 's have' : ' has'} it`;
}

/** Whether `path` is `prefix` or below it. */
const isUnder = (path: Seg[], prefix: Seg[]) => prefix.every((seg, i) => path[i] === seg);

/** Why reading a listing's records is a problem at scale, and the form to use instead. */
function recordsWarning(id: string): string {
  return `\`steps.${id}.output.devices\` holds the whole record of every listed device in memory (about a kilobyte each), which fails at hundreds of thousands of devices: use \`steps.${id}.items\`, passed whole (\`deviceList: "\${{ steps.${id}.items }}"\`), with \`items: { kind: imei }\` on the listing to choose the identifier`;
}

/** A device listing step, whose whole records an expression should not read. */
const isListing = (s: StepSite | undefined) => s?.action !== undefined && listingActions().includes(s.action);

/** Why `steps.<id>.items` of a step that never has items is refused. */
function itemsProblem(id: string, step: StepSite): string {
  const what = step.action ?? step.kind;
  return `\`steps.${id}.items\` is always empty: \`${id}\` (${what}) has no per-device items, which only device listings, ledger queries and calls that name devices have; what it gave is \`steps.${id}.output\``;
}

/** Why `report.write { step: <id> }` of a step that records no per-device results is refused. */
function resultsProblem(id: string): string {
  return `\`${id}\` has no per-device results: only steps that act on or read named devices record them, so this report would have no rows; write what the step gave with \`rows: "\${{ steps.${id}.output... }}"\`, or a listing's devices with \`rows: "\${{ steps.${id}.items }}"\``;
}
