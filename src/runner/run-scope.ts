/**
 * What a run's expressions read (`event`, `inputs`, `vars`, `steps`, `run`, `secrets`, `env`) as the run begins:
 * the scope of its top-level steps.
 */
import { isoTime, parseIsoTime } from '../clock.js';
import { render } from '../expressions/template.js';
import type { Playbook } from '../playbook/schema.js';
import type { Json, RunOptions, Scope } from './types.js';

/** The scope of run `id` of `pb`, started at `startedAt` with its inputs coerced (`inputs`), before its `vars`. */
export function runScope(pb: Playbook, o: RunOptions, id: string, inputs: Json, startedAt: string): Scope {
  const scheduledAt = scheduledAtOf(o.trigger);
  return {
    ctx: {
      event: o.event ?? {},
      inputs,
      vars: {},
      steps: {},
      run: {
        id,
        playbook: pb.name,
        startedAt,
        // A scheduled run's date is its fire's, whenever it starts (made up after a downtime, a backfill).
        scheduledAt,
        date: (scheduledAt || startedAt).slice(0, 10),
        dryRun: Boolean(o.dryRun),
        // The outcome so far: `running` during the steps; what the run has come to in `finally`.
        status: 'running',
        error: '',
      },
      secrets: o.secrets ?? {},
      env: o.env ?? {},
    },
    inLoop: false,
    key: '',
  };
}

/** `run.scheduledAt`: the fire time a schedule started the run for, in UTC; empty for the other runs. */
function scheduledAtOf(trigger: Record<string, unknown> | undefined): string {
  const at = trigger?.type === 'schedule' ? trigger.scheduledAt : undefined;
  const ms = typeof at === 'string' ? parseIsoTime(at) : undefined;
  return ms === undefined ? '' : isoTime(ms);
}

/** The run's `vars`, rendered together before the first step; an error names the var it is in. */
export function renderVars(vars: Json, context: Record<string, unknown>): Json {
  return Object.fromEntries(
    Object.entries(vars).map(([name, value]) => {
      try {
        return [name, render(value, context)];
      } catch (e) {
        throw new Error(`vars.${name}: ${(e as Error).message}`, { cause: e });
      }
    }),
  );
}
