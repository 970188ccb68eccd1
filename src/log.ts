/**
 * Logging. Secrets never reach a log line: every secret value fleetbook handles (client secret, password,
 * tokens, callback credentials) is registered here as it appears, and every line is scrubbed of all of them
 * before it is written, whatever field it hides in. Fields named like secrets are masked outright.
 */
import winston from 'winston';

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

export interface Logger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
  /** A logger whose every line also carries `meta` (e.g. runId and playbook). */
  child(meta: Record<string, unknown>): Logger;
}

const scrub = winston.format((info) => {
  const clean = redactValue({ ...info }) as Record<string, unknown>;
  for (const key of Object.keys(info)) delete (info as Record<string, unknown>)[key];
  Object.assign(info, clean);
  return info;
});

export interface LoggerOptions {
  /** @default 'info' */
  level?: string;
  /** JSON lines (`json`) or readable lines (`pretty`). @default pretty on a TTY, json otherwise */
  format?: 'json' | 'pretty';
  /** Where lines go. @default process.stderr */
  stream?: NodeJS.WritableStream;
}

/** A winston logger writing scrubbed lines to stderr (stdout is kept for command output). */
export function createLogger(o: LoggerOptions = {}): Logger {
  const stream = o.stream ?? process.stderr;
  const pretty = (o.format ?? ((stream as { isTTY?: boolean }).isTTY ? 'pretty' : 'json')) === 'pretty';
  const format = pretty
    ? winston.format.combine(
        scrub(),
        winston.format.timestamp({ format: 'HH:mm:ss' }),
        winston.format.printf(({ level, message, timestamp, ...meta }) => {
          const extra = Object.keys(meta).length ? ` ${JSON.stringify(meta)}` : '';
          return `${String(timestamp)} ${level.padEnd(5)} ${String(message)}${extra}`;
        }),
      )
    : winston.format.combine(scrub(), winston.format.timestamp(), winston.format.json());
  const w = winston.createLogger({
    level: o.level ?? 'info',
    format,
    transports: [new winston.transports.Stream({ stream })],
  });
  return wrap(w);
}

function wrap(w: winston.Logger): Logger {
  return {
    debug: (m, meta) => void w.debug(m, meta),
    info: (m, meta) => void w.info(m, meta),
    warn: (m, meta) => void w.warn(m, meta),
    error: (m, meta) => void w.error(m, meta),
    child: (meta) => wrap(w.child(meta)),
  };
}

/** A logger that drops everything: the library default, so that embedding fleetbook is quiet. */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
