/**
 * The `fleetbook` command: a thin shell over the library. Each subcommand returns its exit code; nothing
 * below src/cli calls process.exit.
 */
import { Command, CommanderError } from 'commander';
import { FleetbookError } from '../errors.js';
import { redact } from '../log.js';
import { registerCall } from './call.js';

/** Exit code for usage errors (bad flags, invalid input, unknown action). */
export const EXIT_USAGE = 2;

export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const setCode = (c: number) => {
    code = c;
  };
  const program = new Command('fleetbook')
    .description(
      'Playbooks for fleets of connected devices on the Device Connectivity, Location and Sensor Management API.',
    )
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({
      writeOut: (s) => process.stdout.write(s),
      writeErr: (s) => process.stderr.write(s),
    });
  registerCall(program, setCode);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end here with exit code 0.
      return e.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    process.stderr.write(`fleetbook: ${redact(e instanceof Error ? e.message : String(e))}\n`);
    return e instanceof FleetbookError && e.code === 'FB_CONFIG' ? EXIT_USAGE : 1;
  }
  return code;
}
