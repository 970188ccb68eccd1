/**
 * Real certificates for the tests of TLS, made by the `openssl` command into a temp folder: a CA, a server
 * certificate it signed (for `localhost` and 127.0.0.1), a client certificate it signed (`fleetbook_cert`), and
 * another CA, which signed neither.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCerts {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  otherCa: string;
  /** Deletes the folder. */
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(`openssl ${args.join(' ')} failed:\n${r.stderr}${r.error?.message ?? ''}`);
}

const KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function ca(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    ...KEY,
    ...['-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`],
    ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
  ]);
}

function signed(dir: string, name: string, cn: string, extensions: string): void {
  openssl(dir, ['req', ...KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(dir, [
    'x509',
    '-req',
    ...['-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial'],
    ...['-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`],
  ]);
}

export function makeCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'fleetbook-certs-'));
  ca(dir, 'ca');
  ca(dir, 'other-ca');
  signed(
    dir,
    'server',
    'localhost',
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
  );
  signed(dir, 'client', 'fleetbook_cert', 'extendedKeyUsage=clientAuth\n');
  const at = (file: string) => join(dir, file);
  return {
    dir,
    ca: at('ca.crt'),
    serverCert: at('server.crt'),
    serverKey: at('server.key'),
    clientCert: at('client.crt'),
    clientKey: at('client.key'),
    otherCa: at('other-ca.crt'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
