/**
 * The daemon's answers to a request no route takes, in the `{ "error": ... }` shape of its other answers:
 * fastify's own are another shape, say "not found" of a path that takes other methods, and echo a path segment
 * that is too long in full.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_PLAYBOOK_NAME } from '../playbook/names.js';

/**
 * Records the routes registered after it (so: called before any is), and answers a request none takes: 405 with
 * `Allow` when its path takes other methods, else 404; `onCallbackMiss` is told of a 404 under /callbacks/ (a
 * sender posting to a wrong URL, which only the daemon's side can see).
 */
export function answerUnrouted(app: FastifyInstance, onCallbackMiss?: () => void): void {
  const paths: { url: string; match: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (route) => {
    let path = paths.find((p) => p.url === route.url);
    if (!path) {
      // `:name` is one segment, `*` the rest of the path.
      const source = route.url
        .split('/')
        .map((s) =>
          s.startsWith(':') ? '[^/]+' : s === '*' ? '.*' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
        )
        .join('/');
      path = { url: route.url, match: new RegExp(`^${source}$`), methods: new Set() };
      paths.push(path);
    }
    for (const m of [route.method].flat()) path.methods.add(m);
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] as string;
    const methods = [
      ...new Set(paths.filter((p) => p.match.test(path)).flatMap((p) => [...p.methods])),
    ].sort();
    if (!methods.length) {
      if (path.startsWith('/callbacks/')) onCallbackMiss?.();
      return reply.code(404).send({ error: `no route ${req.method} ${path}` });
    }
    return reply
      .code(405)
      .header('allow', methods.join(', '))
      .send({ error: `${req.method} ${path} is not allowed: the path takes ${methods.join(', ')}` });
  });
}

/** The longest path parameter (fastify's `maxParamLength`): a playbook name's longest; a run id is shorter. */
export const MAX_PARAM_LENGTH = MAX_PLAYBOOK_NAME;

/** fastify's `frameworkErrors`: what it refuses before any route, said without echoing the path. */
export function frameworkErrors(
  error: Error & { code?: string },
  _req: FastifyRequest,
  reply: FastifyReply,
): void {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return void reply.code(414).send({
      error: `a path segment is longer than ${MAX_PARAM_LENGTH} characters: no run id or playbook name is`,
    });
  if (error.code === 'FST_ERR_BAD_URL')
    return void reply
      .code(400)
      .send({ error: 'the path does not decode: each % is followed by two hexadecimal digits' });
  return void reply.code(400).send({ error: error.message });
}
