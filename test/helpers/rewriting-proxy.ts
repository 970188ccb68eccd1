/**
 * A loopback proxy in front of a real server (the emulator) that rewrites some of its JSON answers: a test of
 * what the client does with an answer the emulator never gives (a NUL in a request id) while the emulator still
 * does the work (the devices are suspended, the report is made). Every request goes to the server as it came;
 * a 2xx JSON answer is handed to `rewrite` with the request's method and path, and what it returns is sent in
 * its place (as JSON, so a NUL goes as `\u0000`, as a service would send it); undefined sends it as it is.
 *
 * ```ts
 * const proxy = await startRewritingProxy(emu.url, (method, path, body) =>
 *   path.endsWith('/actions/suspend') ? { ...body, requestId: 'r\0' } : undefined,
 * );
 * const client = createClient({ baseUrl: `${proxy.url}/api`, ... });
 * ```
 */
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Rewrite = (method: string, path: string, body: unknown) => unknown;

export interface RewritingProxy {
  /** The proxy's origin, e.g. `http://127.0.0.1:41234`: the server's paths under it. */
  url: string;
  /** How many answers `rewrite` replaced. */
  rewritten: number;
  close(): Promise<void>;
}

/** Listens on a free port of 127.0.0.1 and passes every request to `target` (an origin). */
export async function startRewritingProxy(target: string, rewrite: Rewrite): Promise<RewritingProxy> {
  const proxy = { rewritten: 0 } as RewritingProxy;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const out = request(
        `${target}${req.url ?? '/'}`,
        { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
        (answer: IncomingMessage) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            let text = Buffer.concat(body).toString('utf8');
            const status = answer.statusCode ?? 502;
            const json = /json/.test(String(answer.headers['content-type'] ?? ''));
            if (status >= 200 && status < 300 && json && text !== '') {
              const path = (req.url ?? '/').split('?')[0] as string;
              let replaced: unknown;
              try {
                replaced = rewrite(req.method ?? 'GET', path, JSON.parse(text) as unknown);
              } catch (e) {
                // A rewrite that does not fit the answer: told to the client, not thrown in the server.
                res.writeHead(500, { 'content-type': 'text/plain' });
                res.end(`rewriting proxy: ${String(e)}`);
                return;
              }
              if (replaced !== undefined) {
                text = JSON.stringify(replaced);
                proxy.rewritten++;
              }
            }
            const headers = { ...answer.headers };
            delete headers['content-length'];
            delete headers['transfer-encoding'];
            res.writeHead(status, headers);
            res.end(text);
          });
        },
      );
      out.on('error', () => {
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
      out.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
