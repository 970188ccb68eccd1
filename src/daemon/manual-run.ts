/**
 * A manual run started over HTTP (`POST /playbooks/{name}/runs`, the console's form): the playbook must declare
 * `on.manual`, and its inputs are coerced to their declared types. The run is stored, queued in the pool, and its
 * id answered once the store has it.
 */
import type { Playbook } from '../playbook/schema.js';
import { coerceInputs } from '../runner/runner.js';
import type { RunRecord, Store } from '../store/store.js';
import type { RunPool } from './pool.js';
import { newRunId } from '../runner/run-id.js';

export interface ManualRunContext {
  store: Store;
  pool: RunPool;
  owner: string;
  playbooks: ReadonlyMap<string, Playbook>;
  accepting(): boolean;
}

export type ManualRunAnswer = { runId: string } | { status: number; error: string; retryAfter?: number };

export function startManualRun(
  c: ManualRunContext,
  name: string,
  given: Record<string, unknown>,
  by: string,
): ManualRunAnswer {
  const pb = c.playbooks.get(name);
  if (!pb) return { status: 404, error: `no playbook ${name}` };
  if (!pb.on.manual) return { status: 409, error: `playbook ${pb.name} does not declare on.manual: true` };
  if (!c.accepting()) return { status: 503, error: 'stopping', retryAfter: 5 };
  let inputs: unknown;
  try {
    inputs = coerceInputs(pb, given);
  } catch (e) {
    return { status: 400, error: (e as Error).message };
  }
  const run: RunRecord = {
    id: newRunId(),
    owner: c.owner,
    playbook: pb.name,
    status: 'queued',
    trigger: { type: 'manual', by },
    inputs,
    startedAt: new Date().toISOString(),
  };
  c.store.createRun(run);
  c.pool.submit(run);
  return { runId: run.id };
}
