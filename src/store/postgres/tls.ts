/**
 * The TLS of a PostgreSQL URL, checked before any connection: the values of `sslmode`, `ssl` and PGSSLMODE the
 * driver (pg 8, pg-connection-string 2) would not do as written, a URL whose `ssl` the driver would ignore for
 * a meaning of its own, and libpq's variables for the files of TLS (PGSSLROOTCERT, PGSSLCERT, PGSSLKEY), which
 * the driver does not read: they are given to it as the URL's parameters.
 */
import { accessSync, constants } from 'node:fs';
import { ConfigError } from '../../errors.js';

const VERIFY_FULL =
  'TLS, the server certificate checked against the trusted CAs, or those of sslrootcert, and its name against the host';

/**
 * The `sslmode` values of a URL, and what the driver (pg-connection-string 2) does with each: it takes a value
 * it does not know as TLS with the certificate checked, silently, and libpq's `require` and `verify-ca` as
 * `verify-full` (with a warning of its own), unless the URL's `uselibpqcompat=true` gives them libpq's meaning
 * (and then it knows no `no-verify`).
 */
const SSLMODE_MEANINGS: Record<'driver' | 'libpq', readonly (readonly [modes: string[], does: string])[]> = {
  driver: [
    [['disable'], 'no TLS'],
    [['verify-full'], VERIFY_FULL],
    [
      ['require', 'verify-ca'],
      'TLS, checked as verify-full does: the driver takes them as verify-full, and warns so once',
    ],
    [['no-verify'], 'TLS, the certificate not checked'],
  ],
  libpq: [
    [['disable'], 'no TLS'],
    [['verify-full'], VERIFY_FULL],
    [['require'], 'TLS, the certificate not checked, unless sslrootcert is given: then as verify-ca'],
    [
      ['verify-ca'],
      'TLS, the certificate checked against the CAs of sslrootcert, which it needs, but not its name',
    ],
  ],
};

/**
 * libpq's modes that fall back between TLS and none, which the driver cannot do: it takes `prefer` as TLS
 * required (and `allow` as a value it does not know).
 */
const FALLBACKS: Record<string, string> = {
  allow: 'no TLS, unless the server requires it',
  prefer: 'TLS, unless the server does not offer it',
};

/** What `give one of:` lists: each value the driver does as written, and what it does. */
function accepted(meanings: readonly (readonly [values: string[], does: string])[]): string {
  return `give one of: ${meanings.map(([values, does]) => `${values.join(', ')} (${does})`).join('; ')}`;
}

function quoted(value: string): string {
  return value === '' ? '"" (empty)' : JSON.stringify(value);
}

/**
 * Refuses a URL whose `sslmode` the driver would not do as written, naming the value and the ones it does:
 * before any connection, with the other errors of the URL (migrations.ts, cannotOpen).
 */
function checkSslmode(u: URL, origin: string): void {
  const compat = u.searchParams.getAll('uselibpqcompat').at(-1) === 'true';
  const meanings = SSLMODE_MEANINGS[compat ? 'libpq' : 'driver'];
  const known = meanings.flatMap(([modes]) => modes);
  for (const mode of u.searchParams.getAll('sslmode')) {
    if (known.includes(mode)) continue;
    const fallback = FALLBACKS[mode];
    throw new ConfigError(
      fallback
        ? `${origin}: sslmode ${quoted(mode)} (libpq's: ${fallback}) is not one the PostgreSQL driver can do: it never falls back from one to the other; ${accepted(meanings)}`
        : `${origin}: sslmode ${quoted(mode)} is not one the PostgreSQL driver knows${compat ? ' with uselibpqcompat=true' : ''}: ${accepted(meanings)}`,
    );
  }
}

const NODE_CHECKED =
  "TLS, the server certificate checked against Node's trusted CAs, and its name against the host";

/**
 * The `ssl` values of a URL the driver (pg 8) knows, and what it does with each, whatever `uselibpqcompat` says.
 * It takes any other string as TLS on, and then throws a TypeError out of the socket's handler, which ends the
 * process, when the server offers TLS; an empty one as no TLS. It ignores `ssl` when the URL gives `sslmode`,
 * `sslcert`, `sslkey` or `sslrootcert`.
 */
const SSL_MEANINGS: readonly (readonly [values: string[], does: string])[] = [
  [['true', '1'], NODE_CHECKED],
  [['0'], 'no TLS'],
  [['no-verify'], 'TLS, the certificate not checked'],
];

/** The `ssl` values a URL may give. */
const SSL_VALUES: readonly string[] = SSL_MEANINGS.flatMap(([values]) => values);

/** Refuses a URL whose `ssl` the driver does not know, as checkSslmode does an `sslmode`. */
function checkSsl(u: URL, origin: string): void {
  for (const value of u.searchParams.getAll('ssl'))
    if (!SSL_VALUES.includes(value))
      throw new ConfigError(
        `${origin}: ssl ${quoted(value)} is not one the PostgreSQL driver knows: ${accepted(SSL_MEANINGS)}`,
      );
}

/**
 * The PGSSLMODE values the driver (pg 8's ConnectionParameters) does as written, and what it does with each,
 * whatever the URL's `uselibpqcompat` says: libpq's `require` and `verify-ca` as `verify-full` (`true`: Node's
 * checks), and without the warning it gives for the URL's. It takes a value it does not know (`requir`, libpq's
 * `allow`) as no TLS, silently, and `prefer` as `verify-full`; an empty one as none, no TLS.
 */
const PGSSLMODE_MEANINGS: readonly (readonly [modes: string[], does: string])[] = [
  [['disable'], 'no TLS'],
  [
    ['verify-full', 'verify-ca', 'require'],
    `${NODE_CHECKED}: from PGSSLMODE, the driver takes each as verify-full, without a warning`,
  ],
  [['no-verify'], 'TLS, the certificate not checked'],
];

/** The PGSSLMODE values the environment may give, when the driver reads it. */
const PGSSLMODES: readonly string[] = PGSSLMODE_MEANINGS.flatMap(([modes]) => modes);

/** The last value of a parameter of `u`, as the driver reads it. */
function last(u: URL, name: string): string | undefined {
  return u.searchParams.getAll(name).at(-1);
}

/**
 * What settles the TLS of the connections of `u`, as the driver (pg 8, pg-connection-string 2) reads it, first
 * that applies: the URL's `sslmode`, `sslcert`, `sslkey` or `sslrootcert` (`given`, the ones it gives: an empty
 * one is as none), with which it ignores `ssl` and PGSSLMODE; else its `ssl` (an empty one too); else its
 * `sslnegotiation=direct`, which is TLS on (as `ssl=true`); else PGSSLMODE (`value`, undefined when unset).
 */
type TlsSource =
  | { by: 'url'; given: string[] }
  | { by: 'ssl'; value: string }
  | { by: 'sslnegotiation' }
  | { by: 'PGSSLMODE'; value: string | undefined };

function tlsSource(u: URL): TlsSource {
  const given = ['sslmode', 'sslcert', 'sslkey', 'sslrootcert'].filter((name) => last(u, name));
  if (given.length) return { by: 'url', given };
  const ssl = last(u, 'ssl');
  if (ssl !== undefined) return { by: 'ssl', value: ssl };
  if (last(u, 'sslnegotiation') === 'direct') return { by: 'sslnegotiation' };
  return { by: 'PGSSLMODE', value: process.env.PGSSLMODE };
}

/** Refuses a PGSSLMODE the driver would not do as written, when it reads it (an empty one is as none). */
function checkPgsslmode(source: TlsSource, origin: string): void {
  if (source.by !== 'PGSSLMODE') return;
  const mode = source.value;
  if (!mode || PGSSLMODES.includes(mode)) return;
  const reads = `(it reads PGSSLMODE since the URL of ${origin} gives no sslmode, ssl, sslcert, sslkey or sslrootcert)`;
  const give = `${accepted(PGSSLMODE_MEANINGS)}; or unset PGSSLMODE (no TLS), or give sslmode in the URL`;
  const fallback = FALLBACKS[mode];
  throw new ConfigError(
    fallback
      ? `PGSSLMODE ${quoted(mode)} (libpq's: ${fallback}) is not one the PostgreSQL driver can do: it never falls back from one to the other ${reads}; ${give}`
      : `PGSSLMODE ${quoted(mode)} is not one the PostgreSQL driver knows ${reads}: ${give}`,
  );
}

/**
 * Refuses a URL whose `ssl` says otherwise than its `sslmode`, `sslcert`, `sslkey` or `sslrootcert`, which the
 * driver follows instead, ignoring `ssl`: `ssl=0` with them gave TLS. One that agrees (`ssl=true&sslmode=require`)
 * is accepted.
 */
function checkSslAgainstOthers(u: URL, source: TlsSource, origin: string): void {
  const ssl = last(u, 'ssl');
  if (ssl === undefined || source.by !== 'url') return;
  const { given } = source;
  const mode = last(u, 'sslmode');
  const compat = last(u, 'uselibpqcompat') === 'true';
  const unchecked = mode === 'no-verify' || (compat && mode === 'require' && !last(u, 'sslrootcert'));
  const does = mode === 'disable' ? 'none' : unchecked ? 'unchecked' : 'checked';
  const wants = ssl === '0' ? 'none' : ssl === 'no-verify' ? 'unchecked' : 'checked';
  if (does === wants || (wants === 'checked' && does !== 'none')) return;
  const what = { none: 'no TLS', unchecked: 'TLS, the certificate not checked', checked: 'TLS' };
  const noVerify = compat ? 'sslmode=require (without sslrootcert)' : 'sslmode=no-verify';
  const write = {
    none: `for no TLS write sslmode=disable instead of ssl=${ssl}`,
    unchecked: `for TLS with the certificate not checked write ${noVerify} instead of ssl=${ssl}`,
    checked: 'for TLS write sslmode=verify-full',
  }[wants];
  const params = given
    .map((name) => `${name}${name === 'sslmode' ? ` ${quoted(mode ?? '')}` : ''}`)
    .join(', ');
  throw new ConfigError(
    `${origin}: ssl ${quoted(ssl)} (${what[wants]}) contradicts ${params}: the driver ignores ssl when the URL gives sslmode, sslcert, sslkey or sslrootcert, so ${given.length > 1 ? 'they win' : `${given[0]} wins`} (${what[does]}); ${write}, or leave ssl out`,
  );
}

/** libpq's variables naming the files of TLS, and the URL's parameters they stand for. */
const FILES: readonly (readonly [variable: string, param: string])[] = [
  ['PGSSLROOTCERT', 'sslrootcert'],
  ['PGSSLCERT', 'sslcert'],
  ['PGSSLKEY', 'sslkey'],
];
/** libpq's revocation lists, which the driver cannot be given: as variables, and as the URL's parameters. */
const CRLS: readonly (readonly [variable: string, param: string])[] = [
  ['PGSSLCRL', 'sslcrl'],
  ['PGSSLCRLDIR', 'sslcrldir'],
];

/**
 * Whether the connections of `u` use TLS, as the driver decides after the checks above (`source`), and, when
 * PGSSLMODE settles it but is unset or empty, when a variable of FILES names a file, as the URL's would.
 */
function usesTls(u: URL, source: TlsSource): boolean {
  switch (source.by) {
    case 'url':
      return last(u, 'sslmode') !== 'disable';
    case 'ssl':
      return source.value !== '0';
    case 'sslnegotiation':
      return true;
    case 'PGSSLMODE':
      return source.value ? source.value !== 'disable' : FILES.some(([variable]) => process.env[variable]);
  }
}

/**
 * `u` with the files that PGSSLROOTCERT, PGSSLCERT and PGSSLKEY name as its `sslrootcert`, `sslcert` and
 * `sslkey`, where it gives none, as libpq takes them: the driver reads no variable of them, and so connected
 * without the CA or the client certificate they name. Once the URL names a file, the driver ignores its `ssl`
 * and PGSSLMODE: the TLS they asked for is then said as the `sslmode` that does the same. Not read when the
 * connections use no TLS (libpq's `disable`). A revocation list (PGSSLCRL, PGSSLCRLDIR, the URL's `sslcrl`,
 * `sslcrldir`), which the driver ignored, is refused, as is a file that cannot be read.
 */
function withEnvironmentFiles(u: URL, source: TlsSource, origin: string): URL {
  const files = FILES.filter(([variable]) => process.env[variable]);
  const crl = CRLS.find(([variable, param]) => process.env[variable] || last(u, param));
  if ((!files.length && !crl) || !usesTls(u, source)) return u;
  if (crl) {
    const [variable, param] = crl;
    const name = process.env[variable] ? variable : `${origin}: ${param}`;
    throw new ConfigError(
      `${name}: the PostgreSQL driver cannot check a certificate revocation list: ${process.env[variable] ? `unset ${variable}` : `leave ${param} out of the URL`}, or use no TLS (sslmode=disable)`,
    );
  }
  const v = new URL(u.href);
  if (source.by !== 'url') {
    const asked = source.by === 'sslnegotiation' ? 'true' : source.value;
    if (asked === 'no-verify' && last(u, 'uselibpqcompat') === 'true')
      throw new ConfigError(
        `${files.map(([variable]) => variable).join(', ')}: the PostgreSQL driver cannot use ${files.length > 1 ? 'their files' : 'its file'} with ${source.by} "no-verify" and uselibpqcompat=true in the URL of ${origin} (it knows no sslmode no-verify then): for TLS with the certificate not checked, give sslmode=require in the URL`,
      );
    v.searchParams.delete('ssl');
    v.searchParams.set('sslmode', asked === 'no-verify' ? 'no-verify' : 'verify-full');
  }
  for (const [variable, param] of files) {
    if (last(u, param)) continue;
    const file = process.env[variable] as string;
    try {
      accessSync(file, constants.R_OK);
    } catch (e) {
      throw new ConfigError(
        `${variable} names ${quoted(file)}, which cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): the PostgreSQL driver reads it as the URL's ${param}; give a file it can read, or unset ${variable}`,
      );
    }
    v.searchParams.set(param, file);
  }
  return v;
}

/**
 * The ways of asking for TLS the driver (pg 8) knows, from the URL's `sslnegotiation`, else PGSSLNEGOTIATION (an
 * empty one is as none), and what each does.
 */
const NEGOTIATIONS: readonly (readonly [values: string[], does: string])[] = [
  [['postgres'], "TLS asked of the server in PostgreSQL's protocol first, the default"],
  [['direct'], 'the TLS handshake first, PostgreSQL 17 and later, which needs TLS on'],
];

/**
 * Refuses an `sslnegotiation` (or PGSSLNEGOTIATION) the driver does not know, and `direct` when the connections
 * use no TLS, naming the setting: the driver threw at each connection instead, naming neither.
 */
function checkSslnegotiation(u: URL, source: TlsSource, origin: string): void {
  const inUrl = last(u, 'sslnegotiation');
  const value = inUrl || process.env.PGSSLNEGOTIATION;
  if (!value) return;
  const name = inUrl ? `${origin}: sslnegotiation` : 'PGSSLNEGOTIATION';
  if (!NEGOTIATIONS.some(([values]) => values.includes(value)))
    throw new ConfigError(
      `${name} ${quoted(value)} is not one the PostgreSQL driver knows: ${accepted(NEGOTIATIONS)}; or leave it out`,
    );
  if (value === 'direct' && !usesTls(u, source))
    throw new ConfigError(
      `${name} "direct" (the TLS handshake first) needs TLS, and the connections of ${origin} use none: ask for TLS (sslmode=verify-full in the URL, or PGSSLMODE), or ${inUrl ? 'leave sslnegotiation out of the URL' : 'unset PGSSLNEGOTIATION'}`,
    );
}

/**
 * The URL the driver is given for `url`: refused, before any connection, when its TLS (or PGSSLMODE's, when the
 * driver reads it) is not one the driver would do as written; with the files of libpq's variables of TLS.
 */
export function tlsUrl(u: URL, origin: string): URL {
  checkSslmode(u, origin);
  checkSsl(u, origin);
  const source = tlsSource(u);
  checkSslAgainstOthers(u, source, origin);
  checkPgsslmode(source, origin);
  checkSslnegotiation(u, source, origin);
  return withEnvironmentFiles(u, source, origin);
}
