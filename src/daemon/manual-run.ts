/**
 * A manual run started over HTTP (`POST /playbooks/{name}/runs`, the console's form): the playbook must declare
 * `on.manual`, and its inputs are coerced to their declared types; it may be a dry run (`"dryRun": true`). The run
 * is stored, queued in the pool, and its id answered once the store has it.
 */
import { versionOf } from '../playbook/version.js';
import type { Playbook } from '../playbook/schema.js';
import { BODY_WORDING, coerceInputs, type InputWording } from '../runner/inputs.js';
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

/** What a request's JSON body asks of a manual run: its inputs, and whether it is a dry run. */
export interface ManualBody {
  inputs: Record<string, unknown>;
  dryRun: boolean;
}

/**
 * What a request's JSON body asks: none (no body) is a real run on no inputs; else `{ "inputs": { ... },
 * "dryRun": true }`, both optional. Anything else is what is wrong with it. A body that says something else is
 * refused, not read as no inputs: `{ "input": ... }` would start the run on its defaults (another account)
 * without a word; nor is a `dryRun` that is no boolean read as false: `"dryRun": "yes"` would act on the fleet.
 */
export function readBody(body: unknown): ManualBody | string {
  if (body === undefined) return { inputs: {}, dryRun: false };
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return 'the body must be a JSON object: {"inputs": {...}}';
  const other = Object.keys(body).find((k) => k !== 'inputs' && k !== 'dryRun');
  if (other !== undefined)
    return `unknown field ${JSON.stringify(other)} in the body: it takes "inputs" and "dryRun"`;
  const { inputs: given, dryRun = false } = body as { inputs?: unknown; dryRun?: unknown };
  const inputs = given ?? {};
  if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs))
    return 'inputs must be a JSON object';
  if (typeof dryRun !== 'boolean')
    return `dryRun must be true or false (a JSON boolean), not ${JSON.stringify(dryRun)}`;
  return { inputs: inputs as Record<string, unknown>, dryRun };
}

/**
 * Starts a manual run of playbook `name` as a request's JSON `body` asks (readBody): with its inputs, a dry run
 * when it says so (stored as one: whoever takes it up goes on with a dry run). `word` says an input given a value
 * its type does not take, and how to give a missing one, as the requester gives inputs: in the JSON body, or (the
 * console) in its form's fields.
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
  const given = readBody(body);
  if (typeof given === 'string') return { status: 400, error: given };
  let inputs: unknown;
  try {
    inputs = coerceInputs(pb, given.inputs, word);
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
    ...(given.dryRun ? { dryRun: true } : {}),
  };
  c.store.createRun(run);
  c.pool.submit(run);
  return { runId: run.id };
}
