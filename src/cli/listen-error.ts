/**
 * An address `serve` or `emulator` cannot listen on, said as a setting it cannot use (exit 2) and by where it
 * came from, not as Node's `listen EADDRINUSE: address already in use 127.0.0.1:8080`.
 */
import { ConfigError } from '../errors.js';

/** Why the system refused the address, in words, and what to do. */
const WHY: Record<string, string> = {
  EADDRINUSE: 'another process listens there; stop it, or give another',
  EACCES: 'permission denied (a port below 1024 needs privileges); give another',
  EADDRNOTAVAIL: 'no network interface of this machine has that address; give another',
};

/**
 * `e` as a ConfigError when it is the system's refusal of `address` (`HOST:PORT`, from `origin`: a flag or a
 * variable), and as it is otherwise. `what` is what to give instead: `address`, `port`.
 */
export function listenError(e: unknown, address: string, origin: string, what: string): unknown {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const why = code !== undefined ? WHY[code] : undefined;
  if (!why || (e as { syscall?: string }).syscall !== 'listen') return e;
  return new ConfigError(`cannot listen on ${address} (${origin}): ${why} ${what}`);
}
