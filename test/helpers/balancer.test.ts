/**
 * The tests' load balancer keeps its clients' connections open, as a deployment's does: the replicas' answers
 * are to `connection: close` requests (a dead replica must refuse the next one), and passing that on made every
 * client connect again for each request (the emulator's callbacks, the test's own).
 */
import { createServer, request, Agent, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { expect } from 'chai';
import { startBalancer } from './balancer.js';

describe('test helpers: the load balancer', () => {
  it("answers through one kept-alive client connection, whatever the replica's answer said", async () => {
    const backend = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    });
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(backend.address() as { port: number }).port}`;
    const lb = await startBalancer(() => [url]);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sockets: Socket[] = [];
      const answers: [number, string | undefined, string][] = [];
      for (let i = 0; i < 3; i++) {
        const res = await new Promise<IncomingMessage>((resolve, reject) => {
          const out = request(`${lb.url}/callback`, { method: 'POST', agent }, resolve);
          out.on('socket', (s: Socket) => sockets.push(s));
          out.on('error', reject);
          out.end('{}');
        });
        let body = '';
        for await (const c of res) body += String(c);
        answers.push([res.statusCode ?? 0, res.headers.connection, body]);
      }
      expect(answers).to.deep.equal([
        [200, 'keep-alive', 'ok'],
        [200, 'keep-alive', 'ok'],
        [200, 'keep-alive', 'ok'],
      ]);
      expect(new Set(sockets).size, 'client connections').to.equal(1);
      expect(lb.answered.get(url)).to.equal(3);
    } finally {
      agent.destroy();
      await lb.close();
      await new Promise((r) => backend.close(r));
    }
  });
});
