/**
 * What an operation handler gets, and the checks most of them share: the account named by a request, the
 * user's access to it, and the request body against the operation's schema from the catalog.
 */
import { randomUUID } from 'node:crypto';
import type { Operation } from '../api/catalog.js';
import { ACCOUNT_NAME_PATTERN } from '../api/identifiers.js';
import { checkInput } from '../api/validate.js';
import { E } from './errors.js';
import type { AccountInfo, UserInfo } from './seed-tables.js';
import type { Core, EmulatorState } from './state.js';

export type Json = Record<string, unknown>;

export interface Ctx {
  core: Core;
  st: EmulatorState;
  action: string;
  op?: Operation;
  user: UserInfo;
  session: string;
  /** The parsed body, when it is an object; `{}` otherwise (see `raw`). */
  body: Json;
  /** The parsed body as sent (undefined when there was none). */
  raw: unknown;
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  /** Simulated time of the request. */
  now: number;
}

export interface Answer {
  /** @default 200 */
  status?: number;
  /** Undefined: no body. */
  body?: unknown;
  headers?: Record<string, string>;
}

export type Handler = (ctx: Ctx) => Answer | Promise<Answer>;

/** A well-formed account name: the API schemas' pattern (ACCOUNT_NAME_PATTERN), as the service checks it. */
export const ACCOUNT_PATTERN = new RegExp(ACCOUNT_NAME_PATTERN);

/**
 * The account a request names, after the checks every area makes in this order: well-formed ("Invalid
 * account name"), known ("UWS verification failure (Could not find account …)"), and accessible to the
 * session user (401 INVALID_ACCESS).
 */
export function account(ctx: Ctx, name: unknown): AccountInfo {
  if (typeof name !== 'string' || !ACCOUNT_PATTERN.test(name)) throw E.invalidAccountName();
  const a = ctx.st.world.account(name);
  if (!a) throw E.accountNotFound(name);
  if (!ctx.user.accounts.includes(name)) throw E.noAccess();
  return a;
}

/** `account`, and the account must be registered for the location service. */
export function locationAccount(ctx: Ctx, name: unknown): AccountInfo {
  const a = account(ctx, name);
  if (!ctx.st.locationRegistered.has(a.name)) throw E.unregisteredAccount();
  return a;
}

/** The input an action takes: the body's fields plus the path and query parameters (product.md section 3). */
export function actionInput(ctx: Ctx): Json {
  const input: Json = { ...ctx.body };
  for (const [k, v] of Object.entries(ctx.params))
    input[k] = k === 'startIndex' && /^\d+$/.test(v) ? Number(v) : v;
  // The members the operation takes in the query string (a page token), numbers as numbers.
  for (const k of ctx.op?.query ?? []) {
    const v = ctx.query[k];
    if (typeof v === 'string') input[k] = /^\d+$/.test(v) ? Number(v) : v;
  }
  return input;
}

/**
 * Validates the action input against the catalog schema, for operations whose errors the spec does not
 * list, and returns it with the catalog's spelling normalisation applied. `own` names the members the handler
 * checks itself, answering a bad value with the error the spec gives for it (a managed-account operation's
 * `serviceName`, 7.2 `Invalid Service Name`): what the schema says of them is left to it.
 */
export function validInput(ctx: Ctx, own: readonly string[] = []): Json {
  const op = ctx.op;
  if (!op) throw new Error(`no operation for ${ctx.action}`);
  if (ctx.raw !== undefined && (ctx.raw === null || typeof ctx.raw !== 'object' || Array.isArray(ctx.raw)))
    throw E.invalid('The request body must be a JSON object', '/');
  const input = actionInput(ctx);
  const problems = checkInput(op, input).filter((p) => !own.some((m) => p.path === `/${m}`));
  if (problems.length) {
    const first = problems[0]!;
    throw E.invalid(
      problems.map((p) => (p.path === '/' ? p.message : `${p.path}: ${p.message}`)).join('; '),
      first.path,
    );
  }
  return op.normalize ? op.normalize(input) : input;
}

/**
 * A page of a listing that continues by token (groups, SMS history; spec 4.5): 202 and a `Location` of the
 * same operation ending in `?next=<token>` while there is more, 200 for the last page. `path` is the
 * operation's path under `/api`, already encoded.
 */
export function nextPage(path: string, next: number, more: boolean, body: Json): Answer {
  if (!more) return { body };
  return { status: 202, headers: { location: `/api${path}?next=${next}` }, body };
}

export function uuid(): string {
  return randomUUID();
}
