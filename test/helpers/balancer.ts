/**
 * A load balancer in front of daemon replicas, as a deployment puts one (product.md section 10): each request goes
 * to the next replica in turn. A replica that refuses the connection (dead, or not yet started) was sent nothing,
 * so the request goes to the next one, as nginx's `proxy_next_upstream error` does; a replica that dies with the
 * request sent gets it answered 502, whatever it did with it: the sender knows only that it was not acknowledged.
 * Each request reaches its replica on a connection of its own, closed after it; the client's connection is kept.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';

export interface Balancer {
  url: string;
  /** Requests answered by each backend (by its URL), and 502s. */
  readonly answered: Map<string, number>;
  failed: number;
  close(): Promise<void>;
}

/** Listens on a free port of 127.0.0.1 and balances over the URLs `backends()` gives at each request. */
export async function startBalancer(backends: () => string[]): Promise<Balancer> {
  let turn = 0;
  const b = { answered: new Map<string, number>(), failed: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const list = backends();
      const first = turn++;
      if (!list.length) return void res.writeHead(502).end();
      const body = Buffer.concat(chunks);
      const attempt = (tries: number) => {
        const target = list[(first + tries) % list.length] as string;
        const out = request(
          `${target}${req.url ?? '/'}`,
          { method: req.method, headers: { ...req.headers, connection: 'close' } },
          (answer: IncomingMessage) => pass(answer, res, target),
        );
        out.on('error', (e: NodeJS.ErrnoException) => {
          if (e.code === 'ECONNREFUSED' && tries + 1 < list.length) return attempt(tries + 1);
          b.failed++;
          if (!res.headersSent) res.writeHead(502).end();
          else res.destroy();
        });
        out.end(body);
      };
      attempt(0);
    });
  });
  const pass = (answer: IncomingMessage, res: ServerResponse, target: string) => {
    // The connection headers are of the hop to the replica, asked to close (above); the client's connection stays
    // open, or each of its requests would connect again (and its client raise an error for each close).
    const { connection: _connection, 'keep-alive': _keepAlive, ...headers } = answer.headers;
    res.writeHead(answer.statusCode ?? 502, headers);
    answer.pipe(res);
    answer.on('error', () => res.destroy());
    answer.on('end', () => b.answered.set(target, (b.answered.get(target) ?? 0) + 1));
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return Object.assign(b, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
