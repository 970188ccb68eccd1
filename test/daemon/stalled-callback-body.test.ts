/**
 * A callback body that never arrives held the listener's budget of bytes read unauthenticated for as long as its
 * connection stayed open: 16 connections that each sent `Content-Length: 1048576` and 5 bytes, then nothing, had
 * every real callback answered `503 too many callbacks being read` for minutes (still at 330 s), since the
 * daemon set no time limit on receiving a request. Now a request has FLEETBOOK_REQUEST_TIMEOUT to arrive whole:
 * past it the connection is closed and its bytes are free again.
 *
 * Against a real daemon (`fleetbook serve`, the built binary) over raw sockets: with the budget at its least (1
 * MiB, one stalled body takes it all) and the limit at 1 s, a stalled body's connection is closed with a 408,
 * and a callback then sent is stored.
 */
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { expect } from 'chai';
import { DaemonWorld, inboxRequestIds } from '../helpers/daemon.js';
import { LISTENER_PASSWORD, LISTENER_USER, carrierCallback } from '../helpers/listener.js';

/** Opens a connection to the daemon at `url` and sends `text`; resolves once connected. */
async function send(url: string, text: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(text);
  return socket;
}

/** What the daemon wrote on `socket` until it closed it. */
function closed(socket: Socket): Promise<string> {
  let out = '';
  socket.setEncoding('utf8').on('data', (s: string) => (out += s));
  return new Promise((resolve) => socket.once('close', () => resolve(out)));
}

describe('a callback body that stalls (FLEETBOOK_REQUEST_TIMEOUT)', function () {
  this.timeout(60_000);
  let world: DaemonWorld;

  before(async () => {
    world = await DaemonWorld.create('stalled', { user: LISTENER_USER, password: LISTENER_PASSWORD });
  });
  after(() => world?.close());

  it('closes the connection of a body that stops arriving and gives its bytes back to other callbacks', async () => {
    const state = world.state();
    const daemon = await world.start(
      'daemon',
      join(import.meta.dirname, '..', 'fixtures', 'listener-hardening'),
      {
        env: { FLEETBOOK_CALLBACK_PENDING_BYTES: '1048576', FLEETBOOK_REQUEST_TIMEOUT: '1s' },
      },
    );
    const { host } = new URL(daemon.url);
    // `Connection: close`: the daemon closes the connection once it has answered.
    const post = (length: number, body: string) =>
      `POST /callbacks/CarrierService HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${length}\r\nConnection: close\r\n\r\n${body}`;
    const callback = async (id: string) => {
      const body = JSON.stringify(carrierCallback(id));
      const answer = await closed(await send(daemon.url, post(Buffer.byteLength(body), body)));
      return answer.split('\r\n')[0];
    };

    const stalled = await send(daemon.url, post(1024 * 1024, '{"a":'));
    const stalledAnswer = closed(stalled);
    // The stalled body holds the whole budget while it is being read.
    expect(await callback('while-stalled')).to.equal('HTTP/1.1 503 Service Unavailable');

    expect((await stalledAnswer).split('\r\n')[0], 'the stalled request').to.equal(
      'HTTP/1.1 408 Request Timeout',
    );
    expect(await callback('after-stalled')).to.equal('HTTP/1.1 200 OK');
    expect(inboxRequestIds(state)).to.deep.equal(['after-stalled']);
  });
});
