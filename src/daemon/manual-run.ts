/**
 * A manual run started over HTTP (`POST /playbooks/{name}/runs`, the console's form): the playbook must declare
 * `on.manual`, and its inputs are coerced to their declared types. The run is stored, queued in the pool, and its
 * id answered once the store has it.
 */
import { versionOf } from '../playbook/version.js';
import type { Playbook } from '../playbook/schema.js';
import { coerceInputs } from '../runner/runner.js';
import { BODY_WORDING, type InputWording } from '../runner/inputs.js';
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

/**
 * The inputs a request's JSON body gives: none (no body), or `{ "inputs": { ... } }`; anything else is what is
 * wrong with it. A body that says something else is refused, not read as no inputs: `{ "input": ... }` would
 * start the run on its defaults (another account) without a word.
 */
export function bodyInputs(body: unknown): Record<string, unknown> | string {
  if (body === undefined) return {};
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return 'the body must be a JSON object: {"inputs": {...}}';
  const other = Object.keys(body).find((k) => k !== 'inputs');
  if (other !== undefined) return `unknown field ${JSON.stringify(other)} in the body: it takes "inputs"`;
  const inputs = (body as { inputs?: unknown }).inputs ?? {};
  if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs))
    return 'inputs must be a JSON object';
  return inputs as Record<string, unknown>;
}

/**
 * Starts a manual run of playbook `name` with the inputs of a request's JSON `body` (bodyInputs). `word` says an
 * input given a value its type does not take, and how to give a missing one, as the requester gives inputs: in
 * the JSON body, or (the console) in its form's fields.
 */
export function startManualRun(
  c: ManualRunContext,
  name: string,
  body: unknown,
  by: string,
  word: InputWording = BODY_WORDING,
): ManualRunAnswer {
  const pb = c.playbooks.get(name);
  if (!pb) return { status: 404, error: `no playbook ${name}` };
  if (!pb.on.manual) return { status: 409, error: `playbook ${pb.name} does not declare on.manual: true` };
  if (!c.accepting()) return { status: 503, error: 'stopping', retryAfter: 5 };
  const given = bodyInputs(body);
  if (typeof given === 'string') return { status: 400, error: given };
  let inputs: unknown;
  try {
    inputs = coerceInputs(pb, given, word);
  } catch (e) {
    return { status: 400, error: (e as Error).message };
  }
  const run: RunRecord = {
    id: newRunId(),
    owner: c.owner,
    playbook: pb.name,
    version: versionOf(pb).version,
    status: 'queued',
    trigger: { type: 'manual', by },
    inputs,
    startedAt: new Date().toISOString(),
  };
  c.store.createRun(run);
  c.pool.submit(run);
  return { runId: run.id };
}
