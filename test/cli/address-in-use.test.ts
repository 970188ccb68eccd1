/**
 * `fleetbook serve` and `fleetbook emulator` on an address another process listens on refuse to start, naming
 * the address and the flag or variable it came from (child processes; dist/ must be built), rather than Node's
 * `listen EADDRINUSE: address already in use 127.0.0.1:8080`, and exit 2 as for any setting they cannot use.
 */
import { createServer, type Server } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = join(import.meta.dirname, '..', '..', 'playbooks', 'sync-location-exclusions.yaml');

describe('an address in use (child process)', function () {
  this.timeout(60_000);
  let taken: Server;
  let port: number;

  before(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => taken.close(() => resolve())));

  it('serve --listen: exit 2, naming the address and the flag', async () => {
    const state = join(tempDir('fb-in-use-'), 'state.db');
    const r = await fleetbook(['serve', '--playbooks', PLAYBOOK, '--listen', `127.0.0.1:${port}`], {
      FLEETBOOK_STATE: state,
      FLEETBOOK_LOG_LEVEL: 'error',
    });
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      `fleetbook: cannot listen on 127.0.0.1:${port} (--listen): another process listens there; stop it, or give another address\n`,
    ]);
  });

  it('serve with FLEETBOOK_LISTEN: names the variable', async () => {
    const state = join(tempDir('fb-in-use-'), 'state.db');
    const r = await fleetbook(['serve', '--playbooks', PLAYBOOK], {
      FLEETBOOK_STATE: state,
      FLEETBOOK_LOG_LEVEL: 'error',
      FLEETBOOK_LISTEN: `127.0.0.1:${port}`,
    });
    expect([r.code, r.stderr]).to.deep.equal([
      2,
      `fleetbook: cannot listen on 127.0.0.1:${port} (FLEETBOOK_LISTEN): another process listens there; stop it, or give another address\n`,
    ]);
  });

  it('emulator --port: exit 2, naming the address and the flag', async () => {
    const r = await fleetbook(['emulator', '--port', String(port)], { FLEETBOOK_LOG_LEVEL: 'error' });
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      `fleetbook: cannot listen on 127.0.0.1:${port} (--host, --port): another process listens there; stop it, or give another port\n`,
    ]);
  });

  // `.invalid` never resolves (RFC 6761): a misspelt host name, which Node refused as
  // `getaddrinfo ENOTFOUND nosuchhost.invalid`, exit 1, naming neither the setting nor what to do.
  it('serve on a host name that does not resolve: exit 2, naming the variable', async () => {
    const state = join(tempDir('fb-in-use-'), 'state.db');
    const r = await fleetbook(['serve', '--playbooks', PLAYBOOK], {
      FLEETBOOK_STATE: state,
      FLEETBOOK_LOG_LEVEL: 'error',
      FLEETBOOK_LISTEN: 'nosuchhost.invalid:8787',
    });
    expect([r.code, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      'fleetbook: cannot listen on nosuchhost.invalid:8787 (FLEETBOOK_LISTEN): the host name does not resolve; give another address\n',
    ]);
  });

  it('emulator --host that does not resolve, or no address of this machine: exit 2, asking for another host', async () => {
    const unknown = await fleetbook(['emulator', '--host', 'nosuchhost.invalid', '--port', '0'], {
      FLEETBOOK_LOG_LEVEL: 'error',
    });
    expect([unknown.code, unknown.stdout, unknown.stderr]).to.deep.equal([
      2,
      '',
      'fleetbook: cannot listen on nosuchhost.invalid:0 (--host, --port): the host name does not resolve; give another host\n',
    ]);
    // An address of the documentation ranges (RFC 5737) no interface here has. The port was never the matter.
    const local = new Set(Object.values(networkInterfaces()).flatMap((l) => (l ?? []).map((i) => i.address)));
    const address = ['192.0.2.1', '198.51.100.1', '203.0.113.1'].find((a) => !local.has(a)) as string;
    const foreign = await fleetbook(['emulator', '--host', address, '--port', '0'], {
      FLEETBOOK_LOG_LEVEL: 'error',
    });
    expect([foreign.code, foreign.stderr]).to.deep.equal([
      2,
      `fleetbook: cannot listen on ${address}:0 (--host, --port): no network interface of this machine has that address; give another host\n`,
    ]);
  });
});
