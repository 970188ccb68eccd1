/**
 * A playbook compiled once into what its runs execute: each step's durations, retry policies, action and
 * strategy; the members of each step that expressions read; the actions and callback services the playbook
 * uses. A run reads the plan, never the playbook's raw values again (templates are compiled and cached by the
 * expression engine on their first use).
 */
import { CATALOG, isAction, type ActionName, type Operation } from '../api/catalog.js';
import { readsIn } from '../expressions/reads.js';
import { parseDuration } from '../playbook/duration.js';
import type { Playbook, Step } from '../playbook/schema.js';
import { eachStep } from '../playbook/step-tree.js';
import type { BackoffOptions } from '../retry.js';

export interface RetryPolicy {
  on: string[];
  maxAttempts: number;
  backoff: BackoffOptions;
}

export interface DeviceRetryRule {
  on: Set<string>;
  with?: Record<string, unknown>;
  maxAttempts: number;
  delayMs: number;
}

export interface StepPlan {
  timeoutMs?: number;
  retry: RetryPolicy;
  /** The API operation of a `uses:` step (undefined for an engine action). */
  op?: Operation;
  /** A device-state action: how long its devices may take to be confirmed, and how often to ask. */
  confirmMs: number;
  confirmPollMs?: number;
  /** A location report's completion wait. */
  completionMs: number;
  completionPollMs?: number;
  /** `devices.retry`, `devices.ignore` and `devices.toleratedFailurePercent`. */
  deviceRetry: DeviceRetryRule[];
  ignore: Set<string>;
  toleratedFailurePercent?: number;
  /** A `wait:` step: its duration, or its event wait's timeout and poll interval. */
  waitMs?: number;
  pollMs?: number;
  /**
   * The listing whose items this step takes whole as its `deviceList` (`"${{ steps.<id>.items }}"`), read from
   * the store a batch at a time rather than held in memory: a location report with no `limits` to count against.
   */
  streamsFrom?: string;
}

export interface Plan {
  playbook: Playbook;
  /**
   * For each step id, the members expressions read: `output`, `items`, or `*` for anything; `stream` when a
   * step takes its items whole from the store (StepPlan.streamsFrom).
   */
  referenced: Map<string, Set<string>>;
  /** The API actions the steps and polls use, each once, in order. */
  actions: ActionName[];
  /** The callback services the runs wait on or confirm by (`CarrierService` for device-state actions). */
  services: Set<string>;
  /**
   * The secrets its expressions need (`secrets.NAME`, `secrets["NAME"]`): each must be set before a run starts.
   * One whose presence an expression tests (`"NAME" in secrets`, `has(secrets.NAME)`) is optional, not here.
   */
  secrets: Set<string>;
  /**
   * Every secret its expressions name, needed or tested; `any` when one chooses a secret at run time
   * (`secrets[inputs.which]`), so that any may be read.
   */
  secretsNamed: Set<string> | 'any';
  /**
   * The ids of the steps whose devices `limits` count (RunLimits): every step whose action may change devices
   * when the playbook sets limits, else those that set their own; undefined when none does.
   */
  limitedSteps: Set<string> | undefined;
  /** The ids of the steps with `limits` of their own, which count that step's devices apart. */
  ownLimits: Set<string>;
  /** The id of the step (forEach, parallel, onError) each nested step is in, by its id. */
  within: Map<string, string>;
  /** The ids of the forEach steps each step inside one runs in, outermost first, by its id. */
  loops: Map<string, string[]>;
  /**
   * The steps inside a forEach whose items an expression outside the loops that hold it reads (or any step's,
   * `steps[...]`): after those loops, their per-device results over every iteration are read from the ledger.
   */
  itemsAfterLoops: Set<string>;
  of(step: Step): StepPlan;
}

/** The default time a device-state action's devices have to be confirmed. */
export const DEFAULT_CONFIRM_MS = 10 * 60_000;
const DEFAULT_COMPLETION_MS = 2 * 3_600_000;

const compiled = new WeakMap<Playbook, Plan>();

/** The plan of a playbook, compiled on first use and kept as long as the playbook object lives. */
export function planOf(pb: Playbook): Plan {
  let plan = compiled.get(pb);
  if (!plan) compiled.set(pb, (plan = compile(pb)));
  return plan;
}

function compile(pb: Playbook): Plan {
  const steps = new Map<Step, StepPlan>();
  const streams = streamingSteps(pb);
  const actions = new Set<ActionName>();
  const services = new Set<string>();
  const mutating = new Set<string>();
  const ownLimits = new Set<string>();
  for (const step of allSteps(pb)) {
    const from = streams.get(step);
    steps.set(step, { ...stepPlan(step), ...(from ? { streamsFrom: from } : {}) });
    if ('uses' in step && isAction(step.uses)) {
      actions.add(step.uses);
      if (CATALOG[step.uses].mutating) {
        mutating.add(step.id);
        if (step.limits !== undefined) ownLimits.add(step.id);
      }
      if ((CATALOG[step.uses] as Operation).strategy === 'deviceState') services.add('CarrierService');
    }
    const event = eventWait(step);
    if (event) {
      services.add(event.event.service);
      if (event.poll && isAction(event.poll.uses)) actions.add(event.poll.uses);
    }
  }
  const { referenced, secrets, secretsNamed } = reads(pb, streams);
  const within = new Map<string, string>();
  const loops = new Map<string, string[]>();
  for (const list of [pb.steps, pb.finally])
    eachStep(list, (s, parent) => {
      if (!parent) return;
      within.set(s.id, parent.id);
      const around = [...(loops.get(parent.id) ?? []), ...('forEach' in parent ? [parent.id] : [])];
      if (around.length) loops.set(s.id, around);
    });
  return {
    playbook: pb,
    referenced,
    actions: [...actions],
    services,
    secrets,
    secretsNamed,
    limitedSteps: pb.limits !== undefined ? mutating : ownLimits.size ? ownLimits : undefined,
    ownLimits,
    within,
    loops,
    itemsAfterLoops: itemsAfterLoops(pb),
    of(step) {
      const p = steps.get(step);
      if (!p) throw new Error(`step \`${step.id}\` is not part of playbook ${pb.name}`);
      return p;
    },
  };
}

const ms = (d: string | undefined): number | undefined => (d === undefined ? undefined : parseDuration(d));

function stepPlan(step: Step): StepPlan {
  const uses = 'uses' in step ? step : undefined;
  const wait = 'wait' in step ? step.wait : undefined;
  const event = eventWait(step);
  const policy = uses?.devices;
  return {
    ...(step.timeout !== undefined ? { timeoutMs: ms(step.timeout) } : {}),
    retry: retryPolicy(step.retry),
    ...(uses && isAction(uses.uses) ? { op: CATALOG[uses.uses] } : {}),
    confirmMs: ms(uses?.confirm?.timeout) ?? DEFAULT_CONFIRM_MS,
    ...(uses?.confirm?.pollInterval !== undefined ? { confirmPollMs: ms(uses.confirm.pollInterval) } : {}),
    completionMs: ms(uses?.wait?.timeout) ?? DEFAULT_COMPLETION_MS,
    ...(uses?.wait?.pollInterval !== undefined ? { completionPollMs: ms(uses.wait.pollInterval) } : {}),
    deviceRetry: (policy?.retry ?? []).map((r) => ({
      on: new Set(r.on),
      ...(r.with !== undefined ? { with: r.with } : {}),
      maxAttempts: r.maxAttempts ?? 2,
      delayMs: ms(r.delay) ?? 0,
    })),
    ignore: new Set(policy?.ignore ?? []),
    ...(policy?.toleratedFailurePercent !== undefined
      ? { toleratedFailurePercent: policy.toleratedFailurePercent }
      : {}),
    ...(typeof wait === 'string' ? { waitMs: ms(wait) ?? 0 } : {}),
    ...(event
      ? {
          waitMs: ms(event.timeout) ?? 0,
          ...(event.poll?.interval ? { pollMs: ms(event.poll.interval) } : {}),
        }
      : {}),
  };
}

type RetrySpec = NonNullable<Step['retry']>;
type EventWait = Exclude<Extract<Step, { wait: unknown }>['wait'], string>;

/** A `wait:` step's event wait, if it is one. */
function eventWait(step: Step): EventWait | undefined {
  return 'wait' in step && typeof step.wait === 'object' && 'event' in step.wait
    ? (step.wait as EventWait)
    : undefined;
}

function retryPolicy(r: RetrySpec | undefined): RetryPolicy {
  return {
    on: r?.on ?? ['retryable'],
    maxAttempts: r ? (r.maxAttempts ?? 3) : 1,
    backoff: {
      baseDelayMs: ms(r?.delay) ?? 1000,
      maxDelayMs: ms(r?.maxDelay) ?? 60_000,
      fixed: r?.backoff === 'fixed',
      // A fixed delay is exact unless full jitter is asked for; a doubling one has full jitter by default.
      jitter: (r?.backoff === 'fixed' ? (r.jitter ?? 'none') : (r?.jitter ?? 'full')) as 'full' | 'none',
    },
  };
}

/** The strategy of a step's API action, if it is one. */
function strategyOf(s: Step): string | undefined {
  return 'uses' in s && isAction(s.uses) ? (CATALOG[s.uses] as Operation).strategy : undefined;
}

/** `"${{ steps.<id>.items }}"`, a listing's items passed whole. */
const WHOLE_ITEMS = /^\$\{\{\s*steps\s*\.\s*([A-Za-z_]\w*)\s*\.\s*items\s*\}\}$/;

/**
 * The location reports that take a listing's items whole as their `deviceList`, and that listing's id: their
 * devices are read from the store in batches. Not under `limits`, which count every device the run names.
 */
function streamingSteps(pb: Playbook): Map<Step, string> {
  const steps = allSteps(pb);
  const byId = new Map(steps.map((s) => [s.id, s]));
  const out = new Map<Step, string>();
  for (const s of steps) {
    if (!('uses' in s) || strategyOf(s) !== 'locationReport' || s.limits || pb.limits) continue;
    const m = WHOLE_ITEMS.exec(String((s.with as Record<string, unknown> | undefined)?.deviceList ?? ''));
    const from = m ? byId.get(m[1] as string) : undefined;
    if (from && strategyOf(from) === 'listing') out.set(s, from.id);
  }
  return out;
}

/** Every step of a playbook, nested ones (forEach, parallel, onError) after their parent, then `finally`'s. */
function allSteps(pb: Playbook): Step[] {
  return [...stepsIn(pb.steps), ...stepsIn(pb.finally)];
}

/** The steps of `list` and those nested in them (forEach, parallel, onError), each after its parent. */
export function stepsIn(list: readonly Step[] | undefined): Step[] {
  const out: Step[] = [];
  eachStep(list, (s) => out.push(s));
  return out;
}

/** What a step's reads of `steps.<id>` keep of it (Plan.referenced). */
function kept(members: string[]): string {
  const [first, second] = members;
  if (first === undefined) return '*';
  // A listing's counts are not its records: reading them keeps no record in memory.
  if (first === 'output' && (second === 'count' || second === 'leftOut')) return 'counts';
  return first === 'output' || first === 'items' ? first : 'other';
}

/**
 * What the expressions read (expressions/reads.ts): for each step id, what is kept of it (see `kept`), with a
 * listing's items a step streams (`streams`) read as `stream`; and the secrets they need (Plan.secrets).
 */
function reads(
  pb: Playbook,
  streams: Map<Step, string>,
): Pick<Plan, 'referenced' | 'secrets' | 'secretsNamed'> {
  const refs = new Map<string, Set<string>>();
  const add = (id: string, member: string) => refs.set(id, (refs.get(id) ?? new Set()).add(member));
  const secrets = new Set<string>();
  const tested = new Set<string>();
  let anyStep = false;
  let anySecret = false;
  const streamed = new Map([...streams].map(([s, from]) => [(s as { with?: unknown }).with, from]));
  readsIn(
    pb,
    (r) => {
      for (const s of r.steps) add(s.id, kept(s.members));
      anyStep ||= r.anyStep;
      for (const name of r.secrets) secrets.add(name);
      for (const name of r.testedSecrets) tested.add(name);
      anySecret ||= r.anySecret;
    },
    // A streamed `with`: its `deviceList` is read from the store, not held; the rest as any other.
    (o) => {
      const from = streamed.get(o);
      if (from === undefined) return undefined;
      add(from, 'stream');
      return Object.entries(o).flatMap(([k, x]) => (k === 'deviceList' ? [] : [x]));
    },
  );
  // A step chosen at run time (`steps[inputs.which]`) may be any of them: each is kept whole.
  if (anyStep) for (const s of allSteps(pb)) add(s.id, '*');
  const secretsNamed = anySecret ? 'any' : new Set([...secrets, ...tested]);
  for (const name of tested) secrets.delete(name);
  return { referenced: refs, secrets, secretsNamed };
}

/**
 * The steps inside an outermost forEach whose items (or whole state) an expression outside it reads: more reads
 * of them in the whole playbook than in the loop's own steps. A step chosen at run time (`steps[...]`) may be
 * any.
 */
function itemsAfterLoops(pb: Playbook): Set<string> {
  let anyStep = false;
  const count = (v: unknown): Map<string, number> => {
    const n = new Map<string, number>();
    readsIn(v, (r) => {
      anyStep ||= r.anyStep;
      for (const s of r.steps)
        if (s.members[0] === undefined || s.members[0] === 'items') n.set(s.id, (n.get(s.id) ?? 0) + 1);
    });
    return n;
  };
  const all = count(pb);
  const out = new Set<string>();
  const walk = (list: readonly Step[] | undefined): void => {
    for (const s of list ?? []) {
      if ('forEach' in s) {
        const inside = count(s.forEach.steps);
        for (const inner of stepsIn(s.forEach.steps as Step[]))
          if (anyStep || (all.get(inner.id) ?? 0) > (inside.get(inner.id) ?? 0)) out.add(inner.id);
        continue;
      }
      if ('parallel' in s) walk(s.parallel as Step[]);
      if (Array.isArray(s.onError)) walk(s.onError as Step[]);
    }
  };
  walk(pb.steps);
  walk(pb.finally);
  return out;
}

/** The API actions a playbook's steps and polls use, each once, in order. */
export function actionsOf(pb: Playbook): ActionName[] {
  return planOf(pb).actions;
}
