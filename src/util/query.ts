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
 * Refuses a parameter the route does not take, naming those it does, and one given twice. Returns the query
 * as strings.
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
    out[name] = v;
  }
  return out;
}

/** One of `allowed`; undefined when absent or empty. */
export function oneOf<T extends string>(
  name: string,
  v: string | undefined,
  allowed: readonly T[],
): T | undefined {
  if (v === undefined || v === '') return undefined;
  if (!allowed.includes(v as T))
    throw new BadParameter(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
  return v as T;
}

/** An integer from `min` to `max`; `fallback` when absent or empty. */
export function integer(
  name: string,
  v: string | undefined,
  min: number,
  max: number,
  fallback: number,
): number {
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new BadParameter(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
  return n;
}

/** A time (ISO 8601), as ISO in UTC; undefined when absent or empty. */
export function time(name: string, v: string | undefined): string | undefined {
  if (v === undefined || v === '') return undefined;
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw new BadParameter(`${name} must be a time (ISO 8601), got ${JSON.stringify(v)}`);
  return new Date(t).toISOString();
}

/** Text; undefined when absent or empty. */
export function text(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/**
 * The hook (fastify's preValidation) of a read that takes only `params` as query parameters: another is answered
 * 400, named with those it takes.
 */
export function takesOnly(...params: string[]) {
  return async (
    req: { query: unknown },
    reply: { code(status: number): { send(body: unknown): unknown } },
  ): Promise<unknown> => {
    const bad = unknownName('query parameter', Object.keys(req.query as object), params);
    if (bad) return reply.code(400).send({ error: bad });
    return undefined;
  };
}
