/**
 * The run factory: every run starts or resumes here, whatever started it (a callback's event, a schedule, the
 * runs API, `fleetbook run`) and whichever process executes it (the daemon's pool, the CLI). A process sets up
 * its services once (RunServices); each run adds only what is its own (RunRequest).
 */
import type { EngineSettings } from '../actions/settings.js';
import type { ApiClient } from '../api/client.js';
import type { Logger } from '../log.js';
import type { Playbook } from '../playbook/schema.js';
import type { RunRecord, RunSummary, Store } from '../store/store.js';
import { runPlaybook, type DeviceLocks, type RunOptions } from './runner.js';

/**
 * What a process gives every run it executes, set up once at its start. The optional members are those of
 * RunOptions, with the same defaults.
 */
export interface RunServices extends Pick<
  RunOptions,
  'events' | 'confirmations' | 'clock' | 'secrets' | 'env' | 'pollIntervalMs'
> {
  client: ApiClient;
  store: Store;
  /** The process's device locks, shared by all its runs. */
  locks: DeviceLocks;
  logger: Logger;
  /** Compiled once at start-up (engineSettings). */
  engine: EngineSettings;
  /** The process's owner id (its Lease's): the owner of the runs it creates. */
  owner: string;
}

/** How a run is watched and stopped. */
type RunControl = Pick<RunOptions, 'signal' | 'stop' | 'onProgress'>;

/** A run that starts now, stored by the runner as it starts (`fleetbook run`). */
export interface NewRun extends RunControl, Pick<RunOptions, 'inputs' | 'event' | 'dryRun' | 'onPlanned'> {
  trigger: Record<string, unknown>;
}

/**
 * A run already in the store: queued by the matcher, the scheduler or the runs API, or left unfinished by a
 * process that stopped. It runs under its own id, trigger, inputs and event, from its checkpoints.
 */
export interface StoredRun extends RunControl {
  stored: RunRecord;
}

export type RunRequest = NewRun | StoredRun;

/** Starts or resumes `pb`'s run; resolves with its summary, or rejects with Interrupted. */
export function startRun(services: RunServices, pb: Playbook, request: RunRequest): Promise<RunSummary> {
  return runPlaybook(pb, runOptions(services, request));
}

function runOptions(services: RunServices, request: RunRequest): RunOptions {
  if (!('stored' in request)) return { ...services, ...request };
  const { stored } = request;
  // The run's own members first, the services spread last: in Node 20 each member written after a spread costs
  // about a microsecond (and a rest pattern, `{ stored, ...control }`, more), and the daemon does this per run.
  return {
    runId: stored.id,
    stored,
    inputs: (stored.inputs ?? {}) as Record<string, unknown>,
    event: stored.event,
    trigger: stored.trigger as Record<string, unknown>,
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.stop ? { stop: request.stop } : {}),
    ...(request.onProgress ? { onProgress: request.onProgress } : {}),
    ...services,
  };
}
