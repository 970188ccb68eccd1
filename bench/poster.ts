/**
 * The load generator of P3 and P4: keep-alive HTTP/1.1 connections that post requests built before the timing
 * starts, one at a time each (the next when the last is answered). The daemon reads the same request an HTTP
 * client sends (request line, host, connection, content-type, content-length, body); this side only writes
 * bytes and reads each answer as far as its status, content-length and body, so that it takes a fraction of
 * the CPU an HTTP client takes and leaves the cores to what is measured. With several daemons (replicas), the
 * requests go to each in turn.
 */
import { connect, type Socket } from 'node:net';

export interface Answer {
  status: number;
  body: string;
}

/** A POST of `body` to `path` on `url`'s host, as bytes on the wire. */
export function postRequest(url: string, path: string, body: Buffer): Buffer {
  const head =
    `POST ${path} HTTP/1.1\r\nhost: ${new URL(url).host}\r\nconnection: keep-alive\r\n` +
    `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

const HEAD_END = Buffer.from('\r\n\r\n');

/** One keep-alive connection, reopened when the server closes it (`connection: close`). */
class Connection {
  private socket: Socket | undefined;
  private buf: Buffer | undefined;
  private waiting: { resolve: (a: Answer) => void; reject: (e: Error) => void } | undefined;

  constructor(
    private readonly port: number,
    private readonly host: string,
  ) {}

  send(request: Buffer): Promise<Answer> {
    const socket = this.socket ?? this.open();
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      socket.write(request);
    });
  }

  close(): void {
    this.socket?.destroy();
  }

  private open(): Socket {
    const s = connect(this.port, this.host);
    s.setNoDelay(true);
    s.on('data', (d: Buffer) => this.read(d));
    s.on('error', () => undefined); // `close` follows
    s.on('close', () => {
      if (this.socket === s) this.socket = undefined;
      this.buf = undefined;
      const w = this.waiting;
      this.waiting = undefined;
      w?.reject(new Error('the connection closed'));
    });
    this.socket = s;
    return s;
  }

  private read(d: Buffer): void {
    const buf = this.buf ? Buffer.concat([this.buf, d]) : d;
    this.buf = buf;
    const end = buf.indexOf(HEAD_END);
    if (end < 0) return;
    const head = buf.toString('latin1', 0, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    const bodyEnd = end + 4 + length;
    if (buf.length < bodyEnd) return;
    this.buf = buf.length > bodyEnd ? buf.subarray(bodyEnd) : undefined;
    const w = this.waiting;
    this.waiting = undefined;
    if (/\r\nconnection: *close/i.test(head)) {
      this.socket?.destroy();
      this.socket = undefined;
    }
    w?.resolve({ status: Number(head.slice(9, 12)), body: buf.toString('utf8', end + 4, bodyEnd) });
  }
}

/**
 * `connections` senders, each with a keep-alive connection to each of `urls`: each posts a request once its
 * last one is answered, to the next of `urls` in turn (a load balancer's round-robin, without its hop).
 */
export class Poster {
  private readonly senders: Connection[][];

  constructor(urls: string[], connections: number) {
    this.senders = Array.from({ length: connections }, () =>
      urls.map((url) => {
        const u = new URL(url);
        return new Connection(Number(u.port), u.hostname.replace(/^\[|\]$/g, ''));
      }),
    );
  }

  /** Runs `work` on every sender at once, each given its own. */
  async each(work: (send: (request: Buffer) => Promise<Answer>) => Promise<void>): Promise<void> {
    await Promise.all(
      this.senders.map((conns, i) => {
        let turn = i;
        return work((r) => (conns[turn++ % conns.length] as Connection).send(r));
      }),
    );
  }

  close(): void {
    for (const conns of this.senders) for (const c of conns) c.close();
  }
}
