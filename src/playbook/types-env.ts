/**
 * The types of a playbook's expression variables (types.ts), built once per playbook: `event` from
 * `on.callback`, `inputs` from their declarations, `vars` from their values and the `set` steps, `steps` from
 * each step's action. A waited-for callback and a poll's answer give `event` another type where they apply, and
 * a forEach body has `item` (of the type its loop gives, expression-checks.ts) and `index`.
 */
import {
  eventType,
  fromValue,
  inputType,
  join,
  outputType,
  stepType,
  type StepShape,
  type T,
} from './types.js';
import type { TypeEnv } from './types-check.js';
import { isObject } from '../util/json.js';

type Json = Record<string, unknown>;

/** Where `event` is not the playbook's callback: a `wait.event` of `service`, a `poll.until` of `action`. */
export interface EventContext {
  service?: string | undefined;
  action?: string | undefined;
}

/** `event` where no callback starts the playbook: the run's `event` is empty. */
const NO_EVENT: T = {
  k: 'object',
  fields: {},
  open: false,
  none: 'no callback starts this playbook (it has no `on.callback`), so `event` is empty',
};

const STRING: T = { k: 'string' };
const INT: T = { k: 'int' };

/** `run`: what the runner gives (runner.ts); `status` and `error` are the outcome so far. */
const RUN: T = {
  k: 'object',
  fields: {
    id: STRING,
    playbook: STRING,
    startedAt: STRING,
    // The fire time of a run a schedule started; empty for the others.
    scheduledAt: STRING,
    date: STRING,
    dryRun: { k: 'bool' },
    status: STRING,
    error: STRING,
  },
  open: false,
};

/** `vars` in the values of `vars` (runner.ts renders them together, before any step): still empty. */
const VARS_NOT_YET: T = {
  k: 'object',
  fields: {},
  open: false,
  none: 'the values of `vars` are rendered together, before the first step, so none of them can read `vars` (compute this one in a `set` step)',
};

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);

export class TypeScope {
  private base: { key: string; vars: Record<string, T> } | undefined;
  private readonly envs = new Map<string, TypeEnv>();
  private services: string[] = [];

  constructor(private readonly pb: Json) {}

  /**
   * The variables' types where `event` is as `event` says (default: the playbook's callback); `inVars` in the
   * values of `vars`, which are rendered together before the first step, when `vars` is still empty; `item`,
   * inside a forEach body, the type of its `item` (dyn where the loop's items are not known), `index` an int.
   */
  env(event?: EventContext, inVars = false, item?: T): TypeEnv {
    const base = (this.base ??= this.build());
    const eventKey =
      (event?.service ?? (event?.action !== undefined ? `poll:${event.action}` : '')) +
      (inVars ? '|vars' : '') +
      (item ? `|item:${JSON.stringify(item)}` : '');
    let env = this.envs.get(eventKey);
    if (!env) {
      const ev = event?.service
        ? eventType([event.service])
        : event?.action !== undefined
          ? outputType(event.action)
          : this.services.length
            ? eventType(this.services)
            : NO_EVENT;
      const vars = {
        ...base.vars,
        event: ev,
        ...(inVars ? { vars: VARS_NOT_YET } : {}),
        ...(item ? { item, index: INT } : {}),
      };
      env = { key: `${base.key}|${eventKey}`, vars };
      this.envs.set(eventKey, env);
    }
    return env;
  }

  /** The services of the playbook's `on.callback`, in their order (a service given twice, once). */
  callbackServices(): string[] {
    this.base ??= this.build();
    return [...new Set(this.services)];
  }

  private build(): { key: string; vars: Record<string, T> } {
    const pb = this.pb;
    const on = isObject(pb.on) ? pb.on : {};
    this.services = asList(on.callback)
      .map((c) => (isObject(c) && typeof c.service === 'string' ? c.service : undefined))
      .filter((s): s is string => s !== undefined);
    const inputs: Record<string, T> = {};
    const declared = isObject(pb.inputs) ? pb.inputs : {};
    for (const [name, decl] of Object.entries(declared)) inputs[name] = inputType(decl);
    const shapes = new Map<string, StepShape | undefined>();
    const vars: Record<string, T> = {};
    const set = (name: string, t: T) => (vars[name] = name in vars ? join(vars[name] as T, t) : t);
    if (isObject(pb.vars)) for (const [k, v] of Object.entries(pb.vars)) set(k, fromValue(v));
    const walk = (steps: unknown): void => {
      for (const s of asList(steps)) {
        if (!isObject(s)) continue;
        if (typeof s.id === 'string' && !shapes.has(s.id)) shapes.set(s.id, shapeOf(s));
        if (isObject(s.set)) for (const [k, v] of Object.entries(s.set)) set(k, fromValue(v));
        if (Array.isArray(s.onError)) walk(s.onError);
        if (isObject(s.forEach)) walk(s.forEach.steps);
        walk(s.parallel);
      }
    };
    walk(pb.steps);
    walk(pb.finally);
    const steps: Record<string, T> = {};
    for (const [id, shape] of shapes) steps[id] = stepType(shape);
    const key = JSON.stringify([this.services, [...shapes], inputs, vars]);
    return {
      key,
      vars: {
        // Undeclared inputs and unknown steps have their own checks: here they are dyn, not a second error.
        inputs: { k: 'object', fields: inputs, open: true },
        vars: {
          k: 'object',
          fields: vars,
          open: false,
          none: 'the playbook gives no vars (under `vars`, or in a `set` step)',
        },
        steps: { k: 'object', fields: steps, open: true },
        run: RUN,
      },
    };
  }
}

/** What kind of output a step gives (types.ts stepType); undefined where its kind is not clear. */
function shapeOf(s: Json): StepShape | undefined {
  if (typeof s.uses === 'string') return { uses: s.uses };
  if ('uses' in s) return undefined;
  if (isObject(s.set)) return { kind: 'set' };
  if (Array.isArray(s.parallel)) return { kind: 'parallel' };
  if (isObject(s.forEach)) return { kind: 'forEach' };
  if (typeof s.wait === 'string') return { kind: 'pause' };
  if (!isObject(s.wait)) return undefined;
  const event = isObject(s.wait.event) ? s.wait.event : {};
  const poll = isObject(s.wait.poll) ? s.wait.poll : {};
  return {
    kind: 'wait',
    ...(typeof event.service === 'string' ? { service: event.service } : {}),
    ...(typeof poll.uses === 'string' ? { poll: poll.uses } : {}),
  };
}
