/**
 * Secrets never reach a log line, an error message or a report: every secret value fleetbook handles (client
 * secret, password, tokens, callback credentials) is registered here as it appears, and output is scrubbed of
 * all of them, whatever field they hide in. Fields named like secrets are masked outright.
 */
/** What stands for a secret in a log line, a report or an answer. */
export const MASK = '***';

/** The prefix of the playbooks' secrets: `secrets.TEAM_WEBHOOK` is FLEETBOOK_SECRET_TEAM_WEBHOOK. */
export const SECRET_PREFIX = 'FLEETBOOK_SECRET_';
/**
 * The words that make a name a secret's, whole: `adminPassword`, `client_secret`, `x-api-key`, `ACCESS_TOKEN`, not
 * `passengerCount` or `bypassCache`. Each is a word of a camelCase, snake_case or kebab-case name, in the plural
 * too; `api key` is two of them (`apiKey`, `api_key`), or one (`apikey`).
 */
const SECRET_WORDS = [
  'pass',
  'passwd',
  'password',
  'passphrase',
  'secret',
  'token',
  'authorization',
  'credential',
  'apikey',
  'api key',
];

/**
 * A word as a name spells it: `token` (a word of its own: no letter before it), `Token` (after anything, as camelCase
 * starts a word), `TOKEN` (no capital before it); no small letter after it, nor a capital that is not the start of
 * the next word (`TOKENS` is not `TOKEN`). `last`: it may end with an s.
 */
function wordForms(word: string, last: boolean): string {
  const s = last ? '(?:s)?' : '';
  const lower = `(?<![A-Za-z])${word}${s}(?![a-z])`;
  const capital = `${word[0]!.toUpperCase()}${word.slice(1)}${s}(?![a-z])`;
  const upper = `(?<![A-Z])${word.toUpperCase()}${s.toUpperCase()}(?![a-z]|[A-Z](?![a-z]))`;
  return `(?:${lower}|${capital}|${upper})`;
}

/**
 * The names of the fields masked outright (the console's run form keeps none of them in the browser): one holding
 * a word of SECRET_WORDS whole. Case matters (no `i` flag): it is how a name says where its words start. The console
 * is served its source with the playbooks, for the keys of the JSON typed in a form.
 */
export const SECRET_KEY = new RegExp(
  SECRET_WORDS.map((w) => {
    const words = w.split(' ');
    return words.map((x, i) => wordForms(x, i === words.length - 1)).join('[-_.]?');
  }).join('|'),
);

/** Whether a value under a secret's name is masked: not a boolean (true or false hides nothing), nor nothing. */
export function maskable(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '' && typeof v !== 'boolean';
}

/** Every secret value seen in this process. */
const secretValues = new Set<string>();

/** Registers a secret so that no log line, error message or report ever shows it. */
export function registerSecret(value: string | undefined): void {
  // Very short values would mask ordinary words; no real credential is that short.
  if (value && value.length >= 4) secretValues.add(value);
}

/** `text` with every registered secret replaced by ***. */
export function redact(text: string): string {
  let out = text;
  for (const s of secretValues) if (out.includes(s)) out = out.split(s).join(MASK);
  return out;
}

/** A deep copy of `value` with secret-named fields masked and registered secrets removed from strings. */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redact(value);
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (value instanceof Error) return { name: value.name, message: redact(value.message) };
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEY.test(k) && maskable(v) ? MASK : redactValue(v, depth + 1);
  }
  return out;
}

/**
 * A run's record as every history shows it (the console's API, the daemon's `GET /runs`, `fleetbook runs`): its
 * inputs, and the event that started it, redacted (redactValue).
 */
export function redactRun<R extends { inputs: unknown; event?: unknown }>(r: R): R {
  return {
    ...r,
    inputs: redactValue(r.inputs),
    ...(r.event !== undefined ? { event: redactValue(r.event) } : {}),
  };
}

/**
 * Why `${{ env.NAME }}` never holds the variable NAME of the process, or undefined when it may: fleetbook's
 * own variables (its credentials and secrets among them) and those named like a secret are withheld, so that
 * an expression cannot carry one into a log line, a webhook or a report.
 */
export function envWithheld(name: string): string | undefined {
  if (name.startsWith('FLEETBOOK_')) return "it is one of fleetbook's own variables";
  if (/pass|secret|token|key|credential/i.test(name))
    return 'it is named like a password, secret, token, key or credential';
  return undefined;
}

/** What to write instead of `env.NAME` withheld: the secret `secrets.X`, and the variable that gives it. */
export function envInstead(name: string): string {
  const secret = name.startsWith(SECRET_PREFIX) ? name.slice(SECRET_PREFIX.length) : name;
  return `use \`secrets.${secret}\`, set as ${SECRET_PREFIX}${secret}`;
}
