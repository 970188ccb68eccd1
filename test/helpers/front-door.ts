/**
 * A loopback front door to a real server (the emulator), as a load balancer or a TLS terminator in front of the
 * service: every connection is passed to the server, in TLS when given a certificate, until a test makes the door
 * refuse. `refuse()` stops listening (a closed port: connection refused), `listen()` opens the same port again;
 * `resetHandshakes(n)` resets the next n connections as their TLS handshake begins, before any request can be
 * written on them (a server that refuses the connection it accepted).
 *
 * ```ts
 * const door = await startFrontDoor(emu.url, { key, cert });
 * const client = createClient({ baseUrl: `${door.url}/api`, dispatcher: new Pool(door.url, { connect: { ca } }) });
 * ```
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';

export interface FrontDoor {
  /** `https://127.0.0.1:PORT` with a certificate, `http://…` without. */
  url: string;
  /** Connections reset as their handshake began. */
  reset: number;
  resetHandshakes(n: number): void;
  /** Stops listening and closes every connection: the port refuses connections until `listen`. */
  refuse(): Promise<void>;
  listen(): Promise<void>;
  close(): Promise<void>;
}

export async function startFrontDoor(
  target: string,
  tls?: { key: string; cert: string },
): Promise<FrontDoor> {
  const to = new URL(target);
  const sockets = new Set<Socket>();
  let resetNext = 0;
  const pass = (client: Socket) => {
    const server = connect(Number(to.port), to.hostname);
    client.pipe(server).pipe(client);
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
  };
  const tlsServer = tls ? createTlsServer(tls, pass) : undefined;
  const door: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    if (resetNext > 0) {
      resetNext--;
      // The client's first bytes (its TLS hello): nothing of a request can have come yet.
      socket.once('data', () => {
        d.reset++;
        socket.resetAndDestroy();
      });
      return;
    }
    if (tlsServer) tlsServer.emit('connection', socket);
    else pass(socket);
  });
  await new Promise<void>((resolve) => door.listen(0, '127.0.0.1', resolve));
  const { port } = door.address() as { port: number };
  const refuse = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      if (!door.listening) return resolve();
      door.close(() => resolve());
    });
  const d: FrontDoor = {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    reset: 0,
    resetHandshakes: (n) => void (resetNext = n),
    refuse,
    listen: () => new Promise<void>((resolve) => door.listen(port, '127.0.0.1', resolve)),
    close: refuse,
  };
  return d;
}
