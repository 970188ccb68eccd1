/**
 * Secrets never reach a log line, an error message or a report: every secret value fleetbook handles (client
 * secret, password, tokens, callback credentials) is registered here as it appears, and output is scrubbed of
 * all of them, whatever field they hide in. Fields named like secrets are masked outright.
 */
const MASK = '***';
const SECRET_KEY = /pass(word)?|secret|token|authorization|credential|apikey|api_key/i;

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
    out[k] =
      SECRET_KEY.test(k) && v !== undefined && v !== null && v !== '' ? MASK : redactValue(v, depth + 1);
  }
  return out;
}
