/**
 * Logging. Secrets never reach a log line: every line is scrubbed of every registered secret value and of
 * fields named like secrets (src/util/secrets.ts) before it is written.
 */
import type Winston from 'winston';
import { onFirstUse } from './util/on-first-use.js';

export { registerSecret, redact, redactValue } from './util/secrets.js';
import { redactValue } from './util/secrets.js';

export interface Logger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
  /** A logger whose every line also carries `meta` (e.g. runId and playbook). */
  child(meta: Record<string, unknown>): Logger;
}

/** winston, loaded by the first createLogger: a process that only uses silentLogger (an embedding) never loads it. */
const loadWinston = onFirstUse<typeof Winston>(import.meta.url, 'winston');

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
  const winston = loadWinston();
  const scrub = winston.format((info) => {
    const clean = redactValue({ ...info }) as Record<string, unknown>;
    for (const key of Object.keys(info)) delete (info as Record<string, unknown>)[key];
    Object.assign(info, clean);
    return info;
  });
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
  // The level is set once, here: asked once, not at every line (winston's check allocates at each call).
  return wrap(w, { debug: w.isDebugEnabled(), info: w.isInfoEnabled(), warn: w.isWarnEnabled() });
}

/**
 * `w`, or its child with `meta` on every line. A line below the level is dropped before winston formats (and
 * scrubs) it: that work is not free. The child is made at its first line: the daemon makes one per run, and at
 * level `warn` a run that goes well writes none.
 */
function wrap(
  w: Winston.Logger,
  on: { debug: boolean; info: boolean; warn: boolean },
  meta?: Record<string, unknown>,
): Logger {
  let child: Winston.Logger | undefined;
  const out = () => (meta === undefined ? w : (child ??= w.child(meta)));
  return {
    debug: (m, x) => void (on.debug && out().debug(m, x)),
    info: (m, x) => void (on.info && out().info(m, x)),
    warn: (m, x) => void (on.warn && out().warn(m, x)),
    error: (m, x) => void out().error(m, x),
    child: (more) => wrap(w, on, meta === undefined ? more : { ...meta, ...more }),
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
