/**
 * The query parameters of the daemon's and the console's JSON reads. Each is read as the route declares it, and
 * one that is wrong is refused (400, naming it) rather than bent or dropped: a filter read as another, or a
 * misspelt one left out (`?stat=failed`), would list other runs than asked, silently.
 */

/** The parameters as fastify parses a query string: a repeated one comes as a list. */
export type Query = Record<string, string | string[] | undefined>;

/** A query parameter that is wrong: answered 400 with its message. */
export class BadParameter extends Error {}

/**
 * What is wrong when `names` are given where only `accepted` are taken: the first other, named with those that
 * are; undefined when there is none.
 */
export function unknownName(
  kind: 'query parameter' | 'field',
  names: Iterable<string>,
  accepted: readonly string[],
): string | undefined {
  for (const name of names)
    if (!accepted.includes(name))
      return `unknown ${kind} ${JSON.stringify(name)}: this ${kind === 'field' ? 'body' : 'path'} takes ${accepted.length ? accepted.join(', ') : 'none'}`;
  return undefined;
}

/**
 * Refuses a parameter the route does not take, naming those it does, one given twice, and one given empty
 * (`?status=` is no filter, and reading it as none would list what was not asked). Returns the query as strings.
 */
export function onlyParameters(
  query: Query,
  accepted: readonly string[],
): Record<string, string | undefined> {
  const unknown = unknownName('query parameter', Object.keys(query), accepted);
  if (unknown) throw new BadParameter(unknown);
  const out: Record<string, string | undefined> = {};
  for (const [name, v] of Object.entries(query)) {
    if (Array.isArray(v)) throw new BadParameter(`${name} is given ${v.length} times: give it once`);
    if (v === '') throw new BadParameter(`${name} is empty: give it a value, or leave it out`);
    out[name] = v;
  }
  return out;
}

/** One of `allowed`; undefined when absent. */
export function oneOf<T extends string>(
  name: string,
  v: string | undefined,
  allowed: readonly T[],
): T | undefined {
  if (v === undefined) return undefined;
  if (!allowed.includes(v as T))
    throw new BadParameter(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
  return v as T;
}

/**
 * An integer from `min` to `max`, in decimal digits; `fallback` when absent. `Number` alone reads `0x10` as 16,
 * `1e1` as 10, and ` 5` as 5: each is refused here, as `fleetbook runs list --limit` refuses them.
 */
export function integer(
  name: string,
  v: string | undefined,
  min: number,
  max: number,
  fallback: number,
): number {
  if (v === undefined) return fallback;
  const n = /^-?[0-9]+$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < min || n > max)
    throw new BadParameter(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
  return n;
}

/** A date, or a date and a time of day with its zone: ISO 8601 as the API writes times, and nothing looser. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * The milliseconds of an ISO 8601 time; undefined when `v` is not one. `Date.parse` alone takes "0" and "2026",
 * and a time of day without a zone in the daemon's own.
 */
export function isoMs(v: string): number | undefined {
  const t = ISO_TIME.test(v) ? Date.parse(v) : NaN;
  return Number.isNaN(t) ? undefined : t;
}

/** A time (ISO 8601), as ISO in UTC; undefined when absent. */
export function time(name: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const t = isoMs(v);
  if (t === undefined)
    throw new BadParameter(
      `${name} must be a time (ISO 8601: 2026-11-01, or 2026-11-01T08:00:00Z), got ${JSON.stringify(v)}`,
    );
  return new Date(t).toISOString();
}

/** The part of fastify's reply a refusal takes. */
type Reply = { code(status: number): { send(body: unknown): unknown } };

/**
 * What `work` answers, or, when it throws a BadParameter, the 400 `{ error }` that names the parameter: how every
 * route refuses one, the daemon's and the console's. Caught here, in the route, not by an app's error handler: the
 * console's routes answer the same on an app of their own.
 */
export async function refusingBadParameters<T>(reply: Reply, work: () => T | Promise<T>): Promise<unknown> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof BadParameter) return reply.code(400).send({ error: e.message });
    throw e;
  }
}

/**
 * The hook (fastify's preValidation) of a route that takes only `params` as query parameters, each once and not
 * empty (onlyParameters): anything else is answered 400, naming the parameter. Past it, the route's query is a
 * `Record<string, string | undefined>` of those.
 */
export function takesOnly(...params: string[]) {
  return async (req: { query: unknown }, reply: Reply): Promise<unknown> =>
    refusingBadParameters(reply, () => {
      onlyParameters(req.query as Query, params);
      return undefined;
    });
}
