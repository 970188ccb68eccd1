/**
 * Configuration: environment variables, overridden by flags, validated once by schema, then frozen
 * (product.md section 7). Secrets come from the environment only: a flag would show them in `ps`.
 */
import { ConfigError } from './errors.js';
import { HEADER_NAME_PATTERN } from './api/session-header.js';
import { check } from './api/validate.js';
import { closest } from './util/closest.js';
import { registerSecret, SECRET_PREFIX } from './util/secrets.js';
import { DURATION_PATTERN, parseDuration } from './playbook/duration.js';
import { DEFAULT_EXPRESSION_BUDGET } from './expressions/budget.js';
import { ACCOUNT_NAME_PATTERN } from './api/identifiers.js';
import { CALLBACK_SERVICES } from './api/callback-services.js';
import { isPostgresUrl } from './util/state-url.js';

const str = (extra: object = {}) => ({ type: 'string', minLength: 1, ...extra });
/** A TCP port, 0 to 65535, as digits. */
const PORT = '(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})';
const url = (description: string) => ({ type: 'string', format: 'uri', pattern: '^https?://', description });

/**
 * The schema the configuration is checked against: a plain JSON Schema, so that loading the configuration
 * (every command does) never loads a schema library. The build generates its validator (api/generated.ts).
 */
export const CONFIG_SCHEMA = {
  type: 'object',
  required: [
    'state',
    'listen',
    'maxRuns',
    'inboxLimit',
    'callbackFailureLimit',
    'callbackFailureWindow',
    'callbackPendingBytes',
    'requestTimeout',
    'shutdownGrace',
    'lease',
    'logLevel',
    'requestsPerSecond',
    'concurrency',
    'reportsDir',
    'expressionBudget',
    'watch',
  ],
  properties: {
    apiUrl: url("an http or https URL, the service's {base_url}"),
    accessToken: str(),
    clientId: str(),
    clientSecret: str(),
    username: str(),
    password: str(),
    sessionHeader: {
      type: 'string',
      pattern: HEADER_NAME_PATTERN,
      description: 'the name of the header that carries the session token, e.g. VZ-M2M-Token',
    },
    state: str({ description: 'the SQLite file of runs and the ledger' }),
    listen: {
      type: 'string',
      pattern: `^(\\[[0-9A-Fa-f:.]+\\]|[^:[\\]]*):${PORT}$`,
      description:
        'HOST:PORT the daemon listens on, a port up to 65535 (an IPv6 host in brackets), e.g. 127.0.0.1:8787',
    },
    callbackUsername: str(),
    callbackPassword: str(),
    callbackSecret: str({ description: 'the HMAC key of Location callbacks' }),
    callbackUrl: url('an http or https URL, where the service posts callbacks (registration)'),
    callbackAccounts: {
      type: 'array',
      items: str(),
      description: 'comma-separated accounts to register the listener for',
    },
    daemonToken: {
      type: 'string',
      minLength: 16,
      description: 'the bearer token of manual runs',
    },
    consoleToken: {
      type: 'string',
      minLength: 16,
      description: 'the token of the console (reading beyond loopback, and every action)',
    },
    maxRuns: { type: 'integer', minimum: 1, description: 'runs executing at once' },
    inboxLimit: {
      type: 'integer',
      minimum: 1,
      description: 'unprocessed callbacks before the listener answers 503',
    },
    callbackFailureLimit: {
      type: 'integer',
      minimum: 0,
      description:
        'callbacks refused before authenticating (wrong credentials, malformed) one address may send per window before it is answered 429; 0 turns the limit off',
    },
    callbackFailureWindow: {
      type: 'string',
      pattern: DURATION_PATTERN,
      description: 'the window of FLEETBOOK_CALLBACK_FAILURE_LIMIT, e.g. 1m',
    },
    callbackPendingBytes: {
      type: 'integer',
      minimum: 1048576,
      description:
        'bytes of callback bodies read and not yet authenticated, all senders together (each sender a quarter), before the listener answers 503; at least 1048576',
    },
    requestTimeout: {
      type: 'string',
      pattern: DURATION_PATTERN,
      description:
        'how long a request to the daemon may take to arrive whole, headers and body, e.g. 30s; at least 1s',
    },
    shutdownGrace: {
      type: 'string',
      pattern: DURATION_PATTERN,
      description: 'how long SIGTERM lets running steps finish, e.g. 10s or 2m',
    },
    lease: {
      type: 'string',
      pattern: DURATION_PATTERN,
      description:
        'how long a process owns its runs and device locks without renewing, e.g. 15s; after it, another process resumes them; at least 1s',
    },
    retention: {
      type: 'string',
      pattern: DURATION_PATTERN,
      description:
        'how long the store keeps a run after it ended (with its checkpoints and ledger) and a callback after it was processed, e.g. 90d; unset, everything is kept',
    },
    logLevel: { type: 'string', enum: ['error', 'warn', 'info', 'debug'] },
    requestsPerSecond: {
      type: 'number',
      minimum: 1,
      description: 'requests per second per API area',
    },
    concurrency: {
      type: 'integer',
      minimum: 1,
      description: 'requests in flight per API area',
    },
    reportsDir: str({ description: 'the directory report.write writes in; report paths are relative to it' }),
    expressionBudget: {
      type: 'integer',
      minimum: 1000,
      description:
        "units of work one evaluation of an expression may use, plus 100 per element of the run's lists and maps it reads; at least 1000",
    },
    webhookAllow: {
      type: 'array',
      items: str(),
      description:
        'comma-separated hosts, addresses and CIDR ranges notify.webhook may reach although they are not public',
    },
    emulatorWebhooks: {
      type: 'string',
      enum: ['hold', 'send'],
      description:
        'what notify.webhook does on the embedded emulator (no FLEETBOOK_API_URL): hold (the default: sends nothing, the step fails saying so) or send',
    },
    watch: {
      type: 'boolean',
      description:
        'whether serve reloads the playbooks when a file under --playbooks changes: 1 or true (default), 0 or false',
    },
  },
  additionalProperties: false,
} as const;

/** The configuration, as CONFIG_SCHEMA checks it. */
export interface Config {
  readonly apiUrl?: string;
  readonly accessToken?: string;
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly username?: string;
  readonly password?: string;
  /** The session token's header (api/client.ts). @default X-M2M-Token */
  readonly sessionHeader?: string;
  readonly state: string;
  readonly listen: string;
  readonly callbackUsername?: string;
  readonly callbackPassword?: string;
  readonly callbackSecret?: string;
  readonly callbackUrl?: string;
  readonly callbackAccounts?: string[];
  readonly daemonToken?: string;
  /** The console's token (docs/console.md); made up at each start when unset and the daemon is on loopback. */
  readonly consoleToken?: string;
  readonly maxRuns: number;
  readonly inboxLimit: number;
  readonly callbackFailureLimit: number;
  readonly callbackFailureWindow: string;
  readonly callbackPendingBytes: number;
  /**
   * How long a request may take to arrive whole: a sender that stalls is then cut off, and the bytes it held of
   * callbackPendingBytes are free again. @default 30s
   */
  readonly requestTimeout: string;
  readonly shutdownGrace: string;
  readonly lease: string;
  /** Unset: nothing is pruned. */
  readonly retention?: string;
  readonly logLevel: 'error' | 'warn' | 'info' | 'debug';
  readonly requestsPerSecond: number;
  readonly concurrency: number;
  readonly reportsDir: string;
  /** Units of work an expression evaluation may use (expressions/budget.ts). @default 50_000 */
  readonly expressionBudget: number;
  readonly webhookAllow?: string[];
  /**
   * On the embedded emulator, whose events are made up: `hold` sends no webhook (the step fails, saying why),
   * `send` sends them as against the service. Against the service it has no effect. @default hold
   */
  readonly emulatorWebhooks?: 'hold' | 'send';
  /** `serve` reloads the playbooks when their files change (SIGHUP reloads them either way). @default true */
  readonly watch: boolean;
}

/** `true` when A and B are the same type. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The members Config requires. */
type RequiredMembers = { [K in keyof Config]-?: undefined extends Config[K] ? never : K }[keyof Config];
/**
 * Config and CONFIG_SCHEMA, written side by side, name the same members and require the same ones: a change to
 * one without the other does not compile.
 */
type ConfigMatchesSchema = [
  Same<keyof Config, keyof (typeof CONFIG_SCHEMA)['properties']>,
  Same<RequiredMembers, (typeof CONFIG_SCHEMA)['required'][number]>,
] extends [true, true]
  ? true
  : never;
const configMatchesSchema: ConfigMatchesSchema = true;
void configMatchesSchema;

/** Flags that override the environment (non-secret settings only). */
export interface ConfigFlags {
  apiUrl?: string;
  username?: string;
  clientId?: string;
  state?: string;
  listen?: string;
}

/** The flag that gives each member of ConfigFlags. */
const FLAG: { readonly [K in keyof ConfigFlags]-?: string } = {
  apiUrl: '--api-url',
  username: '--username',
  clientId: '--client-id',
  state: '--state',
  listen: '--listen',
};

const ENV = {
  apiUrl: 'FLEETBOOK_API_URL',
  accessToken: 'FLEETBOOK_ACCESS_TOKEN',
  clientId: 'FLEETBOOK_CLIENT_ID',
  clientSecret: 'FLEETBOOK_CLIENT_SECRET',
  username: 'FLEETBOOK_USERNAME',
  password: 'FLEETBOOK_PASSWORD',
  sessionHeader: 'FLEETBOOK_SESSION_HEADER',
  state: 'FLEETBOOK_STATE',
  listen: 'FLEETBOOK_LISTEN',
  callbackUsername: 'FLEETBOOK_CALLBACK_USERNAME',
  callbackPassword: 'FLEETBOOK_CALLBACK_PASSWORD',
  callbackSecret: 'FLEETBOOK_CALLBACK_SECRET',
  callbackUrl: 'FLEETBOOK_CALLBACK_URL',
  callbackAccounts: 'FLEETBOOK_CALLBACK_ACCOUNTS',
  daemonToken: 'FLEETBOOK_DAEMON_TOKEN',
  consoleToken: 'FLEETBOOK_CONSOLE_TOKEN',
  maxRuns: 'FLEETBOOK_MAX_RUNS',
  inboxLimit: 'FLEETBOOK_INBOX_LIMIT',
  callbackFailureLimit: 'FLEETBOOK_CALLBACK_FAILURE_LIMIT',
  callbackFailureWindow: 'FLEETBOOK_CALLBACK_FAILURE_WINDOW',
  callbackPendingBytes: 'FLEETBOOK_CALLBACK_PENDING_BYTES',
  requestTimeout: 'FLEETBOOK_REQUEST_TIMEOUT',
  shutdownGrace: 'FLEETBOOK_SHUTDOWN_GRACE',
  lease: 'FLEETBOOK_LEASE',
  retention: 'FLEETBOOK_RETENTION',
  logLevel: 'FLEETBOOK_LOG_LEVEL',
  requestsPerSecond: 'FLEETBOOK_RATE',
  concurrency: 'FLEETBOOK_CONCURRENCY',
  reportsDir: 'FLEETBOOK_REPORTS_DIR',
  expressionBudget: 'FLEETBOOK_EXPRESSION_BUDGET',
  webhookAllow: 'FLEETBOOK_WEBHOOK_ALLOW',
  emulatorWebhooks: 'FLEETBOOK_EMULATOR_WEBHOOKS',
  watch: 'FLEETBOOK_WATCH',
} as const;

/**
 * Why runs of a playbook whose expressions name `secrets` cannot start with the secrets `have`: those that are
 * not set, and the variables that set them; undefined when every one is. A run would otherwise act on devices
 * and then fail at the step that reads a missing one.
 */
export function unsetSecrets(secrets: Iterable<string>, have: Record<string, string>): string | undefined {
  const missing = [...secrets].filter((s) => !Object.hasOwn(have, s)).sort();
  if (!missing.length) return undefined;
  return `reads ${missing.map((s) => `secrets.${s}`).join(', ')}, not set: set ${missing.map((s) => SECRET_PREFIX + s).join(', ')}`;
}

/**
 * What to say of each FLEETBOOK_ variable of `env` that nothing reads (FLEETBOOK_RATES for FLEETBOOK_RATE would
 * leave the default rate, silently), with the closest that is read. The playbooks' secrets are read.
 */
export function unknownVariables(env: NodeJS.ProcessEnv): string[] {
  const known: string[] = Object.values(ENV);
  return Object.keys(env)
    .filter((k) => k.startsWith('FLEETBOOK_') && !k.startsWith(SECRET_PREFIX) && !known.includes(k))
    .sort()
    .map((k) => {
      const near = closest(k, known, 1)[0];
      return `${k} is set, but fleetbook reads no such variable${near ? ` (did you mean ${near}?)` : ''}`;
    });
}

/** Where `loadConfig(env, flags).state` comes from, for the messages that name the state file. */
export function stateOrigin(env: NodeJS.ProcessEnv, flags: ConfigFlags = {}): string {
  if (flags.state) return '--state';
  return env[ENV.state] ? ENV.state : `the default, ${ENV.state} being unset`;
}

/**
 * The shortest a duration setting may be, and why: a schema pattern cannot compare durations. Shorter, the
 * setting would not do its job, and fail later with a message that blames something else.
 */
const SHORTEST: { readonly [K in 'requestTimeout' | 'lease']: { least: string; why: string } } = {
  requestTimeout: { least: '1s', why: 'a callback of 1 MB needs time to arrive' },
  // Shorter, a renewal (store/lease.ts: every third of the lease) has too little time to land before the
  // lease ends, and the process stops as if another had taken its runs.
  lease: { least: '1s', why: 'it is renewed every third of it' },
};

/**
 * What the schema cannot say of the service's settings, naming each by where it came from and never showing a
 * value (a URL may carry a password). A URL's query, fragment or user would be dropped without a word (only its
 * origin and path are read). A credential is sent as it is: a space at either end (a secret file's newline) is
 * a slip the service would refuse, and a refused login counts towards the five that lock the user. A colon in
 * the client id would split the OAuth Basic credential (`id:secret`) in the wrong place.
 */
function serviceProblems(raw: Record<string, unknown>, from: (key: keyof typeof ENV) => string): string[] {
  const problems: string[] = [];
  if (typeof raw.apiUrl === 'string' && URL.canParse(raw.apiUrl)) {
    const u = new URL(raw.apiUrl);
    const extra = [
      u.username || u.password ? 'a user' : '',
      u.search ? 'a query' : '',
      u.hash ? 'a fragment' : '',
    ]
      .filter(Boolean)
      .join(', ');
    if (extra)
      problems.push(
        `${from('apiUrl')}: has ${extra}, which fleetbook does not send: give the service's {base_url} alone, e.g. https://<host>/api`,
      );
  }
  for (const key of ['accessToken', 'clientId', 'clientSecret', 'username', 'password'] as const) {
    const v = raw[key];
    if (typeof v === 'string' && v.trim() !== v)
      problems.push(`${from(key)}: begins or ends with white space, which would be sent as part of it`);
  }
  if (typeof raw.clientId === 'string' && raw.clientId.includes(':'))
    problems.push(
      `${from('clientId')}: has a colon, which the OAuth Basic credential (id:secret) cannot carry`,
    );
  return problems;
}

/**
 * What the schema cannot say of the listener's settings. Accounts given as commas alone would register the
 * listener for no account, silently. The callback key must be the senders' byte for byte, and so must the
 * listener's credentials, registered with the service as they are: a space at either end (a secret file's
 * newline) would have every Location callback, or every callback, refused; so would every manual start over
 * HTTP and every console request with such a daemon or console token.
 */
function listenerProblems(raw: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (Array.isArray(raw.callbackAccounts) && raw.callbackAccounts.length === 0)
    problems.push(
      `${ENV.callbackAccounts}: names no account: give them comma-separated, e.g. 0000123456-00001,0000123456-00002`,
    );
  // Its registrations would fail at every attempt, tried again for ever.
  const account = new RegExp(ACCOUNT_NAME_PATTERN);
  for (const a of Array.isArray(raw.callbackAccounts) ? (raw.callbackAccounts as string[]) : [])
    if (!account.test(a))
      problems.push(
        `${ENV.callbackAccounts}: ${JSON.stringify(a)} is no account name (10 digits, a hyphen, then 5 digits, e.g. 0000123456-00001)`,
      );
  problems.push(...callbackUrlProblems(raw.callbackUrl));
  for (const key of ['callbackUsername', 'callbackPassword'] as const) {
    const v = raw[key];
    if (typeof v === 'string' && v.trim() !== v)
      problems.push(
        `${ENV[key]}: begins or ends with white space, which the listener would be registered with, and every callback would have to carry`,
      );
  }
  if (typeof raw.callbackSecret === 'string' && raw.callbackSecret.trim() !== raw.callbackSecret)
    problems.push(
      `${ENV.callbackSecret}: begins or ends with white space, which the senders would have to sign with`,
    );
  // HTTP trims a header's value: every request would be refused 401.
  for (const key of ['daemonToken', 'consoleToken'] as const) {
    const v = raw[key];
    if (typeof v === 'string' && v.trim() !== v)
      problems.push(
        `${ENV[key]}: begins or ends with white space, which no client can send in its Authorization header`,
      );
  }
  return problems;
}

/**
 * The daemon registers `{FLEETBOOK_CALLBACK_URL}/callbacks/{service}`: a URL that ends in that route already
 * (`https://host/callbacks`, the address a user reads "where the service posts callbacks" as) was registered as
 * `.../callbacks/callbacks/DeviceUsage`, which the daemon answers 404, and every callback was lost; after a
 * query or a fragment, the route would be part of them.
 */
function callbackUrlProblems(url: unknown): string[] {
  if (typeof url !== 'string' || !URL.canParse(url)) return [];
  const u = new URL(url);
  const example = 'e.g. https://fleetbook.example.com';
  if (u.search || u.hash)
    return [
      `${ENV.callbackUrl}: has ${u.search ? 'a query' : 'a fragment'}, after which fleetbook's /callbacks/{service} would come: give the daemon's address alone, ${example}`,
    ];
  // `/callbacks/DeviceUsage` is a route of the listener; `/callbacks/fleetbook` may be a proxy's prefix.
  const m = /\/callbacks(?:\/([^/]*))?\/?$/i.exec(u.pathname);
  const service = m?.[1]?.toLowerCase();
  if (m && (!service || CALLBACK_SERVICES.some((s) => s.toLowerCase() === service)))
    return [
      `${ENV.callbackUrl}: ends in /callbacks, the listener's route, which fleetbook adds (it registers {url}/callbacks/{service}): give the daemon's address as the service reaches it, ${example}`,
    ];
  return [];
}

/**
 * What the schema cannot say of the store's settings. A URL of another scheme than PostgreSQL's (`postgress://`,
 * `sqlite:///var/lib/...`) was taken for a file path: a SQLite file was made under a folder named `postgress:`,
 * and the runs were recorded there without a word. A retention of nothing was read as none: everything kept.
 */
function storeProblems(raw: Record<string, unknown>, from: (key: keyof typeof ENV) => string): string[] {
  const problems: string[] = [];
  const scheme =
    typeof raw.state === 'string' &&
    !isPostgresUrl(raw.state) &&
    /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw.state)?.[1];
  if (scheme) {
    const meant = closest(scheme, ['postgres', 'postgresql'], 1)[0];
    problems.push(
      `${from('state')}: a URL of scheme ${scheme}:, which names no store${meant ? ` (did you mean ${meant}://?)` : ''}: give a PostgreSQL URL (postgres:// or postgresql://) or the path of a SQLite file`,
    );
  }
  if (typeof raw.retention === 'string' && parseDuration(raw.retention) === 0)
    problems.push(
      `${from('retention')}: ${JSON.stringify(raw.retention)} would keep nothing: give how long to keep what ended, e.g. 90d, or leave it unset to keep everything`,
    );
  return problems;
}

/** Reads, validates and freezes the configuration. Every problem is reported at once, naming its variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, flags: ConfigFlags = {}): Config {
  const pick = (k: keyof typeof ENV) => {
    const v = env[ENV[k]];
    return v === undefined || v === '' ? undefined : v;
  };
  const num = (
    k:
      | 'requestsPerSecond'
      | 'concurrency'
      | 'maxRuns'
      | 'inboxLimit'
      | 'callbackFailureLimit'
      | 'callbackPendingBytes'
      | 'expressionBudget',
    dflt: number,
  ) => {
    const v = pick(k);
    if (v === undefined) return dflt;
    // Not a number: left as the text, which the schema then refuses once ("must be integer").
    return v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
  };
  const flag = (k: 'watch', dflt: boolean) => {
    const v = pick(k)?.trim().toLowerCase();
    if (v === undefined) return dflt;
    // Anything else: left as the text, which the schema then refuses ("must be boolean").
    return v === '1' || v === 'true' ? true : v === '0' || v === 'false' ? false : pick(k);
  };
  const raw: Record<string, unknown> = {
    apiUrl: flags.apiUrl ?? pick('apiUrl'),
    accessToken: pick('accessToken'),
    clientId: flags.clientId ?? pick('clientId'),
    clientSecret: pick('clientSecret'),
    username: flags.username ?? pick('username'),
    password: pick('password'),
    sessionHeader: pick('sessionHeader'),
    state: flags.state ?? pick('state') ?? './.fleetbook/state.db',
    listen: flags.listen ?? pick('listen') ?? '127.0.0.1:8787',
    callbackUsername: pick('callbackUsername'),
    callbackPassword: pick('callbackPassword'),
    callbackSecret: pick('callbackSecret'),
    callbackUrl: pick('callbackUrl'),
    callbackAccounts: pick('callbackAccounts')
      ?.split(',')
      .map((a) => a.trim())
      .filter(Boolean),
    daemonToken: pick('daemonToken'),
    consoleToken: pick('consoleToken'),
    maxRuns: num('maxRuns', 64),
    inboxLimit: num('inboxLimit', 10_000),
    callbackFailureLimit: num('callbackFailureLimit', 50),
    callbackFailureWindow: pick('callbackFailureWindow') ?? '1m',
    callbackPendingBytes: num('callbackPendingBytes', 16 * 1024 * 1024),
    // 1 MB, the largest callback, in 30 s is 35 KB/s: any honest sender is faster.
    requestTimeout: pick('requestTimeout') ?? '30s',
    shutdownGrace: pick('shutdownGrace') ?? '10s',
    lease: pick('lease') ?? '15s',
    retention: pick('retention'),
    logLevel: pick('logLevel') ?? 'info',
    requestsPerSecond: num('requestsPerSecond', 20),
    concurrency: num('concurrency', 10),
    reportsDir: pick('reportsDir') ?? './reports',
    expressionBudget: num('expressionBudget', DEFAULT_EXPRESSION_BUDGET),
    webhookAllow: pick('webhookAllow')
      ?.split(',')
      .map((a) => a.trim())
      .filter(Boolean),
    emulatorWebhooks: pick('emulatorWebhooks'),
    watch: flag('watch', true),
  };
  for (const k of Object.keys(raw)) if (raw[k] === undefined) delete raw[k];
  // A value is named by where it came from, not by the member it fills: the flag that gave it, else its
  // variable (`--listen: ...`, `FLEETBOOK_RATE: must be >= 1`).
  const from = (key: keyof typeof ENV) =>
    key in FLAG && flags[key as keyof ConfigFlags] !== undefined ? FLAG[key as keyof ConfigFlags] : ENV[key];
  const problems = check(CONFIG_SCHEMA, raw, 'config').map((p) => {
    const key = p.path.split('/')[1] as keyof typeof ENV | undefined;
    if (!key || !(key in ENV)) return p.message;
    return `${from(key)}: ${p.message.startsWith(`${key} `) ? p.message.slice(key.length + 1) : p.message}`;
  });
  for (const [key, { least, why }] of Object.entries(SHORTEST)) {
    const text = raw[key];
    // Undefined when it is not a duration, which the schema has said.
    const ms = typeof text === 'string' ? parseDuration(text) : undefined;
    if (ms !== undefined && ms < (parseDuration(least) as number))
      problems.push(
        `${from(key as keyof typeof SHORTEST)}: ${JSON.stringify(text)} is too short: at least ${least} (${why})`,
      );
  }
  problems.push(...serviceProblems(raw, from));
  problems.push(...listenerProblems(raw));
  problems.push(...storeProblems(raw, from));
  // Commas alone allow nothing, as if unset: the host meant would be refused at the first webhook.
  if (Array.isArray(raw.webhookAllow) && raw.webhookAllow.length === 0)
    problems.push(
      `${from('webhookAllow')}: names no host: give host names, addresses or CIDR ranges comma-separated, e.g. hooks.internal.example,10.20.0.0/16`,
    );
  if (problems.length) throw new ConfigError(`invalid configuration:\n  ${problems.join('\n  ')}`);
  for (const s of [
    raw.accessToken,
    raw.clientSecret,
    raw.password,
    raw.callbackPassword,
    raw.callbackSecret,
    raw.daemonToken,
    raw.consoleToken,
  ])
    registerSecret(s as string | undefined);
  // CONFIG_SCHEMA has just checked every member.
  return Object.freeze(raw) as unknown as Config;
}
