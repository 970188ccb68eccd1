/**
 * Logging. Secrets never reach a log line: every line is scrubbed of every registered secret value and of
 * fields named like secrets (src/util/secrets.ts) before it is written.
 */
import type Winston from 'winston';
import { ConfigError } from './errors.js';
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

/**
 * winston, loaded at a logger's first line: a command that writes none (`run` at level `warn`, a quiet daemon)
 * never loads it, nor does a process that only uses silentLogger (an embedding).
 */
const loadWinston = onFirstUse<typeof Winston>(import.meta.url, 'winston');

/** The levels a logger takes (config.ts's `logLevel`), most severe first. */
const LEVELS = ['error', 'warn', 'info', 'debug'] as const;

export interface LoggerOptions {
  /** One of LEVELS. @default 'info' */
  level?: string;
  /** Where `level` came from, as a refusal of it names it. @default 'the log level' */
  levelFrom?: string;
  /** JSON lines (`json`) or readable lines (`pretty`). @default pretty on a TTY, json otherwise */
  format?: 'json' | 'pretty';
  /** Where lines go. @default process.stderr */
  stream?: NodeJS.WritableStream;
}

/**
 * A logger writing scrubbed lines to stderr (stdout is kept for command output), through winston. A level it
 * does not know is refused: winston would drop every line, errors included.
 */
export function createLogger(o: LoggerOptions = {}): Logger {
  const level = o.level ?? 'info';
  const rank = (LEVELS as readonly string[]).indexOf(level);
  if (rank < 0)
    throw new ConfigError(
      `${o.levelFrom ?? 'the log level'} must be one of ${LEVELS.join(', ')}, got ${JSON.stringify(level)}`,
    );
  const stream = o.stream ?? process.stderr;
  const pretty = (o.format ?? ((stream as { isTTY?: boolean }).isTTY ? 'pretty' : 'json')) === 'pretty';
  let w: Winston.Logger | undefined;
  // The level is known here: a line below it is not asked about (winston's check allocates at each call).
  return wrap(() => (w ??= winstonLogger(level, pretty, stream)), {
    debug: rank >= 3,
    info: rank >= 2,
    warn: rank >= 1,
  });
}

function winstonLogger(level: string, pretty: boolean, stream: NodeJS.WritableStream): Winston.Logger {
  const winston = loadWinston();
  const scrub = winston.format((info) => {
    const clean = redactValue({ ...info }) as Record<string, unknown>;
    for (const key of Object.keys(info)) delete (info as Record<string, unknown>)[key];
    Object.assign(info, clean);
    return info;
  });
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
  return winston.createLogger({ level, format, transports: [new winston.transports.Stream({ stream })] });
}

/**
 * The logger `w()` gives (made at the first line), or its child with `meta` on every line. A line below the
 * level is dropped before winston formats (and scrubs) it: that work is not free. The child is made at its first
 * line: the daemon makes one per run, and at level `warn` a run that goes well writes none.
 */
function wrap(
  w: () => Winston.Logger,
  on: { debug: boolean; info: boolean; warn: boolean },
  meta?: Record<string, unknown>,
): Logger {
  let child: Winston.Logger | undefined;
  const out = () => (meta === undefined ? w() : (child ??= w().child(meta)));
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
