/**
 * A PostgreSQL URL whose `sslmode` the driver does not know (`requir`) or cannot do (`allow`, `prefer`) is refused
 * by every command that opens the store, exit 2, before any connection: the driver took `requir` as TLS on,
 * silently (child process: dist/ must be built). So is an `ssl` it does not know (`ture`, which it took as TLS
 * on), and a PGSSLMODE it does not know or cannot do, when it reads it (it took `requir` as no TLS). A loopback
 * listener stands for the server: nothing may reach it.
 */
import { writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOKS = join(import.meta.dirname, '..', 'fixtures', 'listener-hardening');
const SSL_ACCEPTED =
  "give one of: true, 1 (TLS, the server certificate checked against Node's trusted CAs, and its name against the host); 0 (no TLS); no-verify (TLS, the certificate not checked)";
const PGSSLMODE_ACCEPTED =
  "give one of: disable (no TLS); verify-full, verify-ca, require (TLS, the server certificate checked against Node's trusted CAs, and its name against the host: from PGSSLMODE, the driver takes each as verify-full, without a warning); no-verify (TLS, the certificate not checked); or unset PGSSLMODE (no TLS), or give sslmode in the URL";
const ACCEPTED =
  'give one of: disable (no TLS); verify-full (TLS, the server certificate checked against the trusted CAs, or those of sslrootcert, and its name against the host); require, verify-ca (TLS, checked as verify-full does: the driver takes them as verify-full, and warns so once); no-verify (TLS, the certificate not checked)';

describe('fleetbook refuses a PostgreSQL URL with an sslmode it does not know (child process)', function () {
  this.timeout(60_000);
  let server: Server;
  let port: number;
  let reached = 0;
  let tmp: string;
  let playbook: string;
  before(async () => {
    tmp = tempDir('fleetbook-postgres-sslmode-');
    playbook = join(tmp, 'pause.yaml');
    await writeFile(
      playbook,
      'version: 1\nname: pause\non:\n  manual: true\nsteps:\n  - id: pause\n    wait: 10ms\n',
    );
    server = createServer((socket) => {
      reached++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.close();
  });

  const commands = () => [
    ['store', 'migrate'],
    ['store', 'prune', '--older-than', '1d'],
    ['runs', 'list'],
    ['run', playbook],
    ['serve', '--playbooks', PLAYBOOKS, '--listen', '127.0.0.1:0'],
  ];

  it('exits 2 on a typo, naming the value and the accepted ones, from FLEETBOOK_STATE and --state', async () => {
    const url = `postgres://fleetbook:s3cret@127.0.0.1:${port}/fleetbook?sslmode=requir`;
    for (const args of commands()) {
      // A daemon that started would not exit: it is stopped after 10 s, and the test fails.
      const r = await fleetbook(args, { FLEETBOOK_STATE: url }, [], undefined, 10_000);
      expect(r.code, `${args[0]}: ${r.stderr}`).to.equal(2);
      expect(r.stderr, args[0]).to.include(
        `fleetbook: FLEETBOOK_STATE: sslmode "requir" is not one the PostgreSQL driver knows: ${ACCEPTED}\n`,
      );
      expect(r.stderr).not.to.include('s3cret');
    }
    const r = await fleetbook(['store', 'migrate', '--state', url], {});
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.equal(
      `fleetbook: --state: sslmode "requir" is not one the PostgreSQL driver knows: ${ACCEPTED}\n`,
    );
    expect(reached, 'connections attempted').to.equal(0);
  });

  it('exits 2 on allow, saying the driver cannot fall back between TLS and none', async () => {
    const url = `postgresql://fleetbook@127.0.0.1:${port}/fleetbook?sslmode=allow`;
    const r = await fleetbook(['store', 'migrate'], { FLEETBOOK_STATE: url });
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.equal(
      `fleetbook: FLEETBOOK_STATE: sslmode "allow" (libpq's: no TLS, unless the server requires it) is not one the PostgreSQL driver can do: it never falls back from one to the other; ${ACCEPTED}\n`,
    );
    expect(reached, 'connections attempted').to.equal(0);
  });

  it('exits 2 on an ssl the driver does not know, naming it and the accepted ones', async () => {
    const url = `postgres://fleetbook:s3cret@127.0.0.1:${port}/fleetbook?ssl=ture`;
    for (const args of commands()) {
      const r = await fleetbook(args, { FLEETBOOK_STATE: url }, [], undefined, 10_000);
      expect(r.code, `${args[0]}: ${r.stderr}`).to.equal(2);
      expect(r.stderr, args[0]).to.include(
        `fleetbook: FLEETBOOK_STATE: ssl "ture" is not one the PostgreSQL driver knows: ${SSL_ACCEPTED}\n`,
      );
      expect(r.stderr).not.to.include('s3cret');
    }
    expect(reached, 'connections attempted').to.equal(0);
  });

  it('exits 2 on a PGSSLMODE the driver does not know or cannot do, when the URL lets it read it', async () => {
    const url = `postgres://fleetbook:s3cret@127.0.0.1:${port}/fleetbook`;
    const reads = (origin: string) =>
      `(it reads PGSSLMODE since the URL of ${origin} gives no sslmode, ssl, sslcert, sslkey or sslrootcert)`;
    for (const args of commands()) {
      const r = await fleetbook(args, { FLEETBOOK_STATE: url, PGSSLMODE: 'requir' }, [], undefined, 10_000);
      expect(r.code, `${args[0]}: ${r.stderr}`).to.equal(2);
      expect(r.stderr, args[0]).to.include(
        `fleetbook: PGSSLMODE "requir" is not one the PostgreSQL driver knows ${reads('FLEETBOOK_STATE')}: ${PGSSLMODE_ACCEPTED}\n`,
      );
    }
    const r = await fleetbook(['store', 'migrate', '--state', url], { PGSSLMODE: 'prefer' });
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.equal(
      `fleetbook: PGSSLMODE "prefer" (libpq's: TLS, unless the server does not offer it) is not one the PostgreSQL driver can do: it never falls back from one to the other ${reads('--state')}; ${PGSSLMODE_ACCEPTED}\n`,
    );
    expect(reached, 'connections attempted').to.equal(0);
  });
});
