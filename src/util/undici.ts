/**
 * The parts of undici fleetbook uses: Pool, Agent and their `request`. undici's index loads all of the package
 * (fetch, WebSocket, the caches, the mocks), which was the largest share of every command's start-up; these
 * are the modules of its `lib/` that the index re-exports, which undici's package.json (no `exports`) lets be
 * required by path. A version of undici that moves them fails every command at its start, not quietly.
 *
 * The objects are undici's own: a test's MockAgent (from the index) is a Dispatcher these take, and undici's
 * errors are the same classes.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);

// What undici's index does before it exports anything: a dispatcher's `request`, `stream`, `pipeline`, `connect`
// and `upgrade` are its API's, added to Dispatcher's prototype. Done again by the index, if a test loads it,
// with the same functions.
Object.assign(
  (require('undici/lib/dispatcher/dispatcher') as { prototype: object }).prototype,
  require('undici/lib/api') as object,
);

export const Pool = require('undici/lib/dispatcher/pool') as typeof Undici.Pool;
export type Pool = Undici.Pool;
export const Agent = require('undici/lib/dispatcher/agent') as typeof Undici.Agent;
export type Agent = Undici.Agent;
export type { Dispatcher } from 'undici';

/**
 * undici's `request(url, options)` on the dispatcher `options` names (there is no global one here): the
 * dispatcher is given the URL's origin, and its path with its query.
 */
export function request(
  url: string | URL,
  options: Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Undici.Dispatcher },
): Promise<Undici.Dispatcher.ResponseData> {
  const u = new URL(url);
  const { dispatcher, ...rest } = options;
  return dispatcher.request({ ...rest, origin: u.origin, path: `${u.pathname}${u.search}` });
}
