/**
 * A request the daemon has no route for is answered in its own error shape, `{ "error": ... }`, saying what the
 * path takes: a method a path does not take is 405 with `Allow`, not "Route DELETE:/runs not found"; a path
 * nothing answers is 404 (one under /callbacks/, a sender's post to a wrong URL, counted as a callback refused); a run id longer than any is 414 without the whole path echoed back (fastify answered
 * `{error, code: FST_ERR_MAX_PARAM_LENGTH, message}` with every character of it). Real HTTP to `fleetbook
 * serve` in a child process (dist/ must be built).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { DaemonWorld, type DaemonProcess } from '../helpers/daemon.js';
import { LISTENER_PASSWORD, LISTENER_USER } from '../helpers/listener.js';

describe('fleetbook serve: a request no route takes', function () {
  this.timeout(60_000);
  let world: DaemonWorld;
  let daemon: DaemonProcess;

  before(async () => {
    world = await DaemonWorld.create('unrouted', { user: LISTENER_USER, password: LISTENER_PASSWORD });
    const dir = join(world.dir, 'playbooks');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'hello.yaml'),
      'version: 1\nname: hello\non: { manual: true }\nsteps:\n  - { id: say, uses: log, with: { message: hi } }\n',
    );
    daemon = await world.start('daemon', dir);
  });
  after(() => world?.close());

  const send = async (method: string, path: string) => {
    const r = await fetch(`${daemon.url}${path}`, { method });
    return { status: r.status, allow: r.headers.get('allow'), body: (await r.json()) as unknown };
  };

  it('a method a path does not take: 405, with the methods it takes', async () => {
    expect(await send('DELETE', '/runs')).to.deep.equal({
      status: 405,
      allow: 'GET, HEAD',
      body: { error: 'DELETE /runs is not allowed: the path takes GET, HEAD' },
    });
    expect(await send('PUT', '/runs/abc')).to.deep.equal({
      status: 405,
      allow: 'GET, HEAD',
      body: { error: 'PUT /runs/abc is not allowed: the path takes GET, HEAD' },
    });
    expect(await send('GET', '/playbooks/hello/runs')).to.deep.equal({
      status: 405,
      allow: 'POST',
      body: { error: 'GET /playbooks/hello/runs is not allowed: the path takes POST' },
    });
  });

  it('a path nothing answers: 404, in the error shape of the others', async () => {
    expect(await send('GET', '/nosuch?x=1')).to.deep.equal({
      status: 404,
      allow: null,
      body: { error: 'no route GET /nosuch' },
    });
  });

  it('a post under /callbacks/ no route takes: 404, and counted as a callback refused', async () => {
    const refused = async () =>
      /fleetbook_callbacks_rejected_total\{reason="no_route"\} (\d+)/.exec(
        await (await fetch(`${daemon.url}/metrics`)).text(),
      )?.[1];
    const before = Number((await refused()) ?? 0);
    // A registration of a URL that ends in the route already: the service posts to /callbacks/callbacks/{service}.
    expect(await send('POST', '/callbacks/callbacks/DeviceUsage')).to.deep.equal({
      status: 404,
      allow: null,
      body: { error: 'no route POST /callbacks/callbacks/DeviceUsage' },
    });
    expect(Number(await refused())).to.equal(before + 1);
    // Another path is nobody's callback.
    await send('GET', '/nosuch');
    expect(Number(await refused())).to.equal(before + 1);
  });

  it('a run id longer than any: 414, saying so without echoing it', async () => {
    const r = await send('GET', `/runs/${'a'.repeat(5_000)}`);
    expect(r).to.deep.equal({
      status: 414,
      allow: null,
      body: { error: 'a path segment is longer than 100 characters: no run id or playbook name is' },
    });
  });
});
