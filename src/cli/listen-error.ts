/**
 * An address `serve` or `emulator` cannot listen on, said as a setting it cannot use (exit 2) and by where it
 * came from, not as Node's `listen EADDRINUSE: address already in use 127.0.0.1:8080`, nor as
 * `getaddrinfo ENOTFOUND fleetbok-host` for a host name that does not resolve.
 */
import { ConfigError } from '../errors.js';

/** Why the system refused the address, in words, and which part of it to give again. */
const WHY: Record<string, { why: string; part: 'port' | 'host' }> = {
  EADDRINUSE: { why: 'another process listens there; stop it, or give another', part: 'port' },
  EACCES: { why: 'permission denied (a port below 1024 needs privileges); give another', part: 'port' },
  EADDRNOTAVAIL: { why: 'no network interface of this machine has that address; give another', part: 'host' },
  ENOTFOUND: { why: 'the host name does not resolve; give another', part: 'host' },
  EAI_AGAIN: {
    why: 'the host name could not be resolved now (the name service failed); give another',
    part: 'host',
  },
};

/** The system calls of listening: the bind itself, and the lookup of a host name before it. */
const SYSCALLS = new Set(['listen', 'getaddrinfo']);

/**
 * `e` as a ConfigError when it is the system's refusal of `address` (`HOST:PORT`, from `origin`: a flag or a
 * variable), and as it is otherwise. `what` is what to give instead, by the part at fault: `address` for both
 * (`--listen`), or `port` and `host` (`--host, --port`).
 */
export function listenError(
  e: unknown,
  address: string,
  origin: string,
  what: string | { port: string; host: string },
): unknown {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const known = code !== undefined ? WHY[code] : undefined;
  if (!known || !SYSCALLS.has((e as { syscall?: string }).syscall ?? '')) return e;
  const instead = typeof what === 'string' ? what : what[known.part];
  return new ConfigError(`cannot listen on ${address} (${origin}): ${known.why} ${instead}`);
}
