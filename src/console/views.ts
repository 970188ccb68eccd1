/** The shapes the console's JSON API answers with (docs/console.md), made from the store's records. */
import type { Diagnostic } from '../playbook/diagnostics.js';
import type { Playbook } from '../playbook/schema.js';
import { MASK, maskable, redact, redactRun, redactValue, SECRET_KEY } from '../util/secrets.js';
import { triggerText } from '../store/run-views.js';
import type {
  DeviceCounts,
  DeviceHistoryRow,
  LedgerRow,
  RunRecord,
  RunStatus,
  RunSummary,
  StepSummary,
} from '../store/store.js';

export interface RunRow {
  id: string;
  playbook: string;
  status: string;
  trigger: unknown;
  /** What started it, as `fleetbook runs list` says it (`schedule, backfill for ...`): the runs table shows it. */
  triggerText: string;
  startedAt: string;
  endedAt?: string;
  error?: string;
  /** Why a cancel was asked of the process that holds the run, while it has not ended (RunRecord). */
  cancelRequested?: string;
  /** A dry run (`fleetbook run --dry-run`, the Dry run of the run form): it sends no call that acts. */
  dryRun?: boolean;
  devices?: DeviceCounts;
}

export function runRow(r: RunRecord): RunRow {
  return {
    id: r.id,
    playbook: r.playbook,
    status: r.status,
    trigger: r.trigger,
    triggerText: triggerText(r.trigger, r.dryRun),
    startedAt: r.startedAt,
    ...(r.endedAt ? { endedAt: r.endedAt } : {}),
    ...(r.error ? { error: redact(r.error) } : {}),
    ...(r.cancelRequested ? { cancelRequested: r.cancelRequested } : {}),
    ...(r.dryRun ? { dryRun: true } : {}),
    ...(r.summary ? { devices: r.summary.devices } : {}),
  };
}

/**
 * A run in full: its inputs and event with every secret fleetbook knows redacted, its steps (`steps`: those of
 * its summary as shown, store/run-views.ts shownSummary, with the steps it never reached); a dry run's planned
 * calls: its summary's once it has ended, else `planned`, those planned so far (run-views.ts liveView).
 */
export function runDetail(
  r: RunRecord,
  steps: StepSummary[] = r.summary?.steps ?? [],
  planned?: NonNullable<RunSummary['planned']>,
): RunRow & {
  inputs: unknown;
  event?: unknown;
  owner?: string;
  /** The version of its playbook it was created with, and executes (playbook/version.ts). */
  version?: string;
  steps: StepSummary[];
  planned?: NonNullable<RunSummary['planned']>;
} {
  const { inputs, event } = redactRun(r);
  return {
    ...runRow(r),
    inputs,
    ...(event !== undefined ? { event } : {}),
    ...(r.owner ? { owner: r.owner } : {}),
    ...(r.version ? { version: r.version } : {}),
    steps,
    ...(r.summary?.planned ? { planned: r.summary.planned } : planned && r.dryRun ? { planned } : {}),
  };
}

export interface DeviceRow {
  step: string;
  deviceId: string;
  kind: string;
  outcome: string;
  errorType?: string;
  errorClass?: string;
  attempts: number;
  requestId?: string;
  /** What the step returned for the device (a location report: its location). */
  data?: unknown;
  at: string;
}

export function deviceRow(r: LedgerRow): DeviceRow {
  return {
    step: r.step,
    deviceId: r.deviceId,
    kind: r.kind,
    outcome: r.outcome,
    ...(r.errorType !== undefined ? { errorType: r.errorType } : {}),
    ...(r.errorClass !== undefined ? { errorClass: r.errorClass } : {}),
    attempts: r.attempts,
    ...(r.requestId !== undefined ? { requestId: r.requestId } : {}),
    ...(r.data !== undefined ? { data: r.data } : {}),
    at: r.at,
  };
}

/** A device's result in one run, as its history lists it: the run's id, playbook, start and status, then the row. */
export function deviceHistoryRow(r: DeviceHistoryRow): {
  runId: string;
  playbook: string;
  runStartedAt: string;
  runStatus: RunStatus;
  dryRun?: true;
} & DeviceRow {
  return {
    runId: r.runId,
    playbook: r.playbook,
    runStartedAt: r.runStartedAt,
    runStatus: r.runStatus,
    ...(r.dryRun ? { dryRun: true } : {}),
    ...deviceRow(r),
  };
}

/** A playbook as the console lists it: its triggers, inputs, and what `validate` says of its file. */
export function playbookView(
  pb: Playbook,
  file: string,
  diagnostics: readonly Diagnostic[],
): {
  name: string;
  file: string;
  description?: string;
  triggers: { callback?: unknown; schedule?: unknown[]; manual: boolean };
  inputs: Record<string, unknown>;
  problems: { file: string; line: number; col: number; severity: string; message: string; rule: string }[];
} {
  const s = pb.on.schedule;
  return {
    name: pb.name,
    file,
    ...(typeof pb.description === 'string' ? { description: pb.description } : {}),
    triggers: {
      ...(pb.on.callback ? { callback: pb.on.callback } : {}),
      ...(s ? { schedule: Array.isArray(s) ? s : [s] } : {}),
      manual: Boolean(pb.on.manual),
    },
    inputs: inputsView(pb.inputs ?? {}),
    problems: diagnostics.map((d) => ({
      file: d.file,
      line: d.line,
      col: d.column,
      severity: d.severity,
      message: d.message,
      rule: d.rule,
    })),
  };
}

/**
 * A playbook's inputs as the console serves them, their constraints included (pattern, minimum, items…): the
 * values of an input named like a secret (its default, its enum, its items' enum) masked, as a run's inputs are,
 * and a default's secret-named fields and known secrets masked in it. A checkbox's default stays: true or false
 * hides nothing, and the form could not show it otherwise. Each says what the form needs to know of that:
 * `secret` (a password field), `masked` (its default as served is not its default: the run form leaves the field
 * out of the run it starts, unless typed in, and the daemon applies it).
 */
function inputsView(inputs: NonNullable<Playbook['inputs']>): Record<string, unknown> {
  const mask = (v: unknown) => (maskable(v) ? MASK : v);
  return Object.fromEntries(
    Object.entries(inputs).map(([name, spec]) => {
      const view = redactValue(spec) as Record<string, unknown>;
      if (SECRET_KEY.test(name) && spec.type !== 'boolean') {
        view.secret = true;
        if (spec.default !== undefined) view.default = mask(spec.default);
        if (spec.enum) view.enum = spec.enum.map(mask);
        if (spec.items?.enum) view.items = { ...spec.items, enum: spec.items.enum.map(mask) };
      }
      if (JSON.stringify(view.default) !== JSON.stringify(spec.default)) view.masked = true;
      return [name, view];
    }),
  );
}
