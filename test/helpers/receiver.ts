/** A webhook receiver over real loopback HTTP that keeps what it was sent, as `nc -l` would show it. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Receiver {
  /** `http://127.0.0.1:PORT/oncall`. */
  url: string;
  /** Its port on 127.0.0.1, for a URL of another host name or path. */
  port: number;
  /** The JSON bodies received, in order. */
  bodies: unknown[];
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 that answers 200 to every request. */
export async function startReceiver(): Promise<Receiver> {
  const bodies: unknown[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        bodies.push(JSON.parse(text));
      } catch {
        bodies.push(text);
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/oncall`,
    port,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
