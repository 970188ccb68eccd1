/** `fleetbook emulator`: the service emulator in the foreground, until SIGINT or SIGTERM. */
import type { EmulatorOptions, Wording } from '../emulator/index.js';
import { createLogger } from '../log.js';
import { listenError } from './listen-error.js';
import { EXIT_USAGE } from './exit-codes.js';

/** The flags of `fleetbook emulator`, as commander parses them. */
export interface EmulatorFlags {
  port: string;
  host: string;
  seed?: string;
  accounts?: string;
  devicesPerAccount?: string;
  timeScale?: string;
}

/** The flag of each option that has limits. */
const FLAGS = {
  port: '--port',
  seed: '--seed',
  accounts: '--accounts',
  devicesPerAccount: '--devices-per-account',
  timeScale: '--time-scale',
} as const;

/**
 * The emulator's options from its flags, each read whole and in decimal (not by `Number`, which reads `` as 0
 * and `0x10` as 16), and how its refusals say them: by the flag's name and the text it got. A text that is no
 * number is NaN, which the emulator's limits (limits.ts) refuse.
 */
function emulatorOptions(flags: EmulatorFlags): { options: EmulatorOptions; wording: Wording } {
  const int = (text: string) => (/^-?[0-9]+$/.test(text) ? Number(text) : NaN);
  const options: EmulatorOptions = { port: int(flags.port), host: flags.host };
  const got: Wording['got'] = { port: JSON.stringify(flags.port) };
  if (flags.accounts !== undefined) {
    options.accounts = int(flags.accounts);
    got.accounts = JSON.stringify(flags.accounts);
  }
  if (flags.devicesPerAccount !== undefined) {
    options.devicesPerAccount = int(flags.devicesPerAccount);
    got.devicesPerAccount = JSON.stringify(flags.devicesPerAccount);
  }
  if (flags.timeScale !== undefined) {
    const scale = flags.timeScale;
    options.timeScale = /^[0-9]+(\.[0-9]+)?$/.test(scale) ? Number(scale) : NaN;
    got.timeScale = JSON.stringify(scale);
  }
  // A seed is a number or a word, the world drawn from its text: digits are a number only where the number writes
  // back as the same text, so that `007` and digits past 2^53 stay the seeds given, as a reset's text does.
  if (flags.seed !== undefined)
    options.seed =
      /^[0-9]+$/.test(flags.seed) && String(Number(flags.seed)) === flags.seed
        ? Number(flags.seed)
        : flags.seed;
  return { options, wording: { names: FLAGS, got } };
}

export async function emulatorCommand(flags: EmulatorFlags): Promise<number> {
  const { startEmulator, OptionError } = await import('../emulator/index.js');
  const { options, wording } = emulatorOptions(flags);
  let emu;
  try {
    emu = await startEmulator(
      {
        ...options,
        logger: createLogger({
          level: process.env.FLEETBOOK_LOG_LEVEL ?? 'info',
          levelFrom: 'FLEETBOOK_LOG_LEVEL',
        }),
      },
      wording,
    );
  } catch (e) {
    // A flag out of its limits, or an address the system refuses: both are the flags' (exit 2).
    const refused =
      e instanceof OptionError
        ? e
        : listenError(e, `${flags.host}:${flags.port}`, '--host, --port', { port: 'port', host: 'host' });
    if (refused === e && !(e instanceof OptionError)) throw e;
    process.stderr.write(`fleetbook: ${(refused as Error).message}\n`);
    return EXIT_USAGE;
  }
  process.stdout.write(`${emu.banner()}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await emu.close();
  return 0;
}
