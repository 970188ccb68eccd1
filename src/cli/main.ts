/**
 * The `fleetbook` command: a thin shell over the library. Each subcommand returns its exit code; nothing
 * below src/cli calls process.exit.
 */
import { packageVersion } from '../util/version.js';
import { Command, CommanderError } from 'commander';
import { FleetbookError } from '../errors.js';
import { redact } from '../util/secrets.js';
import { addHelpCommands } from './help.js';
import type { CallFlags } from './call.js';
import type { ListFlags, ShowFlags } from './runs.js';
import type { ResumeFlags } from './runs-resume.js';
import type { DeviceFlags } from './device.js';
import type { EmulatorFlags } from './emulator.js';
import type { RunFlags } from './run.js';
import type { ServeFlags } from './serve.js';
import type { StoreFlags } from './store.js';
import { EXIT_USAGE } from './exit-codes.js';

/** The flag of every command that opens the store: its file or URL, in place of FLEETBOOK_STATE. */
const STATE_OPTION = [
  '--state <file-or-url>',
  'the SQLite file or PostgreSQL URL (env FLEETBOOK_STATE)',
] as const;

/** The commands that read the configuration (config.ts). */
const READS_CONFIG = ['call', 'run', 'serve', 'runs', 'device', 'logins', 'store'];

/**
 * A flag that takes one value is refused when given twice, with both values, rather than commander keeping the
 * last without a word: `store prune --older-than 90d ... --older-than 1d` would prune all but a day. A flag that
 * collects its values (`--input`) and a switch (`--json`) are left as they are.
 */
function refuseRepeatedOptions(command: Command): void {
  for (const option of command.options) {
    if (option.isBoolean() || option.parseArg) continue;
    let first: string | undefined;
    command.on(`option:${option.name()}`, (value: string) => {
      if (first === undefined) first = value;
      else
        command.error(
          `error: option '${option.flags}' is given twice (${JSON.stringify(first)} and ${JSON.stringify(value)}): give it once`,
          { code: 'commander.optionGivenTwice' },
        );
    });
  }
  for (const sub of command.commands) refuseRepeatedOptions(sub);
}

/**
 * `runs` alone is `runs list`, and `logins` alone `logins list`; a first word that names no subcommand (`runs
 * lsit`) is said to be one, not handed to `list` as an argument it does not take.
 */
function refuseUnknownSubcommand(group: Command): void {
  group.hook('preSubcommand', (_group, sub) => {
    const [first] = group.args;
    if (sub.name() === 'list' && first && !['list', 'help'].includes(first) && !first.startsWith('-'))
      group.error(`error: unknown command '${first}'`, { code: 'commander.unknownCommand' });
  });
}

/**
 * What is wrong with a command line commander answers with its usage alone: a group without its command
 * (`fleetbook`, `fleetbook store`).
 */
function usageError(command: Command): string {
  const names = command.commands.map((c) => c.name()).filter((n) => n !== 'help');
  return `error: missing command: give one of ${names.join(', ')}`;
}

export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const setCode = (c: number) => {
    code = c;
  };
  // Whether commander said an error (it then prints the usage after it, showHelpAfterError).
  let errorSaid = false;
  const program = new Command('fleetbook')
    .description(
      'Playbooks for fleets of connected devices on the Device Connectivity, Location and Sensor Management API.',
    )
    .version(packageVersion(), '-V, --version', 'print the version of fleetbook')
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({
      writeOut: (s) => process.stdout.write(s),
      writeErr: (s) => process.stderr.write(s),
      outputError: (s, write) => {
        errorSaid = true;
        write(s);
      },
    })
    // A usage printed as an error with no error said (no command given): say what is wrong.
    .addHelpText('beforeAll', ({ error, command }) =>
      error && !errorSaid ? `${usageError(command)}\n` : '',
    );
  // A command that reads the configuration says which FLEETBOOK_ variables it does not read: a misspelt one
  // would otherwise leave its setting at the default without a word.
  program.hook('preAction', async (_program, command) => {
    // By the command below the program: `runs` for `runs list`.
    const top = command.parent === program ? command : command.parent;
    if (!top || command.name() === 'help' || !READS_CONFIG.includes(top.name())) return;
    for (const w of (await import('../config.js')).unknownVariables(process.env))
      process.stderr.write(`fleetbook: warning: ${w}\n`);
  });
  // Each command loads its implementation when it runs, so that `validate` never loads the HTTP client and
  // `runs` loads only the store.
  program
    .command('validate')
    .description(
      'Check playbooks: schema, action arguments, expressions, step references, error names, cron.',
    )
    .argument('<paths...>', 'playbook files, or directories searched for *.yaml and *.yml')
    .option('--format <format>', 'text (file:line:col: message [rule], with the source line) or json', 'text')
    .action(async (paths: string[], flags: { format: string }) =>
      setCode(await (await import('./validate.js')).runValidate(paths, flags.format)),
    );
  program
    .command('fmt')
    .description(
      'Quote the expressions only fleetbook reads as YAML (unquoted ${{ }} inside { } or [ ]), in place; nothing else changes.',
    )
    .argument(
      '[paths...]',
      'playbook files, or directories searched for *.yaml and *.yml (default: playbooks)',
    )
    .option('--check', 'change nothing; exit 1 when a file would change')
    .action(async (paths: string[], flags: { check?: boolean }) =>
      setCode(await (await import('./fmt.js')).fmtCommand(paths, flags)),
    );
  program
    .command('schema')
    .description('Print the playbook JSON Schema (for editors: yaml-language-server).')
    .action(async () => setCode((await import('./validate.js')).printSchema()));
  program
    .command('call')
    .description('Call one API operation. The response goes to stdout; an API error goes to stderr as JSON.')
    .argument('<action>', 'the action, e.g. location.createReport (see `fleetbook actions`)')
    .option('--body <json>', 'the action input as JSON (request body fields plus path parameters)')
    .option('--body-file <file>', 'read the input from a JSON file (- for stdin)')
    .option(
      '--api-url <url>',
      'the service {base_url} (env FLEETBOOK_API_URL); without it, an embedded emulator',
    )
    .option(
      '--username <name>',
      'session user (env FLEETBOOK_USERNAME; the password only from FLEETBOOK_PASSWORD)',
    )
    .option(
      '--client-id <id>',
      'OAuth client id (env FLEETBOOK_CLIENT_ID; the secret only from FLEETBOOK_CLIENT_SECRET)',
    )
    .option(...STATE_OPTION)
    .action(async (action: string, flags: CallFlags) =>
      setCode(await (await import('./call.js')).runCall(action, flags)),
    );
  program
    .command('run')
    .description('Run a playbook now. Without FLEETBOOK_API_URL, against an embedded emulator.')
    .argument('<playbook>', 'the playbook file')
    .option('--input <key=value>', 'an input (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .option(
      '--event <file>',
      'a callback event, as the service posts it (JSON; - for stdin): runs the playbook as the daemon would for it',
    )
    .option(
      '--scheduled-at <time>',
      "a fire time of the playbook's schedule, with its offset (2026-11-30T02:00:00-05:00): runs the playbook as its schedule would have then (a backfill)",
    )
    .option('--dry-run', 'make the read-only calls, none of the mutating ones, and report what they would do')
    .option('--json', 'print the run summary as JSON on stdout')
    .option(...STATE_OPTION)
    .action(async (file: string, flags: RunFlags) =>
      setCode(await (await import('./run.js')).runCommand(file, flags)),
    );
  program
    .command('test')
    .description(
      'Run the playbook tests (NAME.test.yaml beside NAME.yaml), each case on its own embedded emulator.',
    )
    .argument('[paths...]', 'test files, or directories searched for *.test.yaml (default: playbooks)')
    .action(async (paths: string[]) => setCode(await (await import('./test.js')).testCommand(paths)));
  program
    .command('serve')
    .description(
      'The daemon: callback listener, matcher, scheduler, runner pool, /healthz /readyz /metrics /runs. Without FLEETBOOK_API_URL, on an embedded emulator.',
    )
    .option('--playbooks <dir>', 'the playbooks to load (a directory or a file)', 'playbooks')
    .option('--listen <host:port>', 'where to listen (env FLEETBOOK_LISTEN, default 127.0.0.1:8787)')
    .option(...STATE_OPTION)
    .option(
      '--no-watch',
      'do not reload the playbooks when their files change (env FLEETBOOK_WATCH=0); SIGHUP reloads them',
    )
    .action(async (flags: ServeFlags) => setCode(await (await import('./serve.js')).serveCommand(flags)));
  // `runs` and `store` are groups: each subcommand declares only its own arguments and flags, so that commander
  // refuses the others rather than leave them unread.
  const runs = program
    .command('runs')
    .description(
      'Run history and per-device outcomes: `runs list` (the default), `runs show ID`, `runs resume ID`, `runs cancel ID`.',
    );
  refuseUnknownSubcommand(runs);
  runs
    .command('list', { isDefault: true })
    .description('List the runs, newest first.')
    .option('--limit <n>', 'at most this many runs (1-1000, default 50)')
    .option('--playbook <name>', "only this playbook's runs")
    .option('--status <status>', 'only runs in this status (queued, running, succeeded, failed, cancelled)')
    .option('--trigger <type>', 'only runs started this way (callback, schedule, manual)')
    .option(
      '--since <when>',
      'only runs started since: a duration back from now (24h, 7d), or a time (ISO 8601)',
    )
    .option('--json', 'as JSON')
    .option(...STATE_OPTION)
    .action(async (flags: ListFlags) => setCode(await (await import('./runs.js')).listCommand(flags)));
  runs
    .command('show')
    .description("Show a run's summary, and its per-device outcomes.")
    .argument('<id>', 'the run id, or the start of one that no other run shares')
    .option('--devices', 'every device outcome (each filter below implies it)')
    .option('--step <id>', "only this step's devices")
    .option(
      '--outcome <outcome>',
      'only the devices of this outcome: accepted, succeeded, failed, skipped, unconfirmed',
    )
    .option(
      '--error-type <type>',
      'only the devices recorded with this error type, e.g. "SVC CACHE UNAVAILABLE"',
    )
    .option('--device <part>', 'only the devices whose id contains this')
    .option('--json', 'as JSON')
    .option('--csv', 'only the devices, as CSV (the columns of report.write of the ledger)')
    .option(...STATE_OPTION)
    .action(async (id: string, flags: ShowFlags) =>
      setCode(await (await import('./runs.js')).showCommand(id, flags)),
    );
  runs
    .command('resume')
    .description(
      'Go on here with an unfinished run no process holds (one a killed `fleetbook run` left), from its checkpoints.',
    )
    .argument('<id>', 'the run id, or the start of one that no other run shares')
    .option('--json', 'print the run summary as JSON')
    .option(...STATE_OPTION)
    .action(async (id: string, flags: ResumeFlags) =>
      setCode(await (await import('./runs-resume.js')).resumeCommand(id, flags)),
    );
  runs
    .command('cancel')
    .description(
      'Cancel an unfinished run: the process that holds it does; one no process holds is ended here.',
    )
    .argument('<id>', 'the run id, or the start of one that no other run shares')
    .option(...STATE_OPTION)
    .action(async (id: string, flags: { state?: string }) =>
      setCode(await (await import('./runs.js')).cancelCommand(id, flags)),
    );
  program
    .command('device')
    .description(
      'Every result the ledger holds for one device, newest first: each run and step that touched it.',
    )
    .argument('<id>', 'the device id, as its steps named it (an IMEI, an ICCID, ...)')
    .option('--limit <n>', 'at most this many results (1-1000, default 50)')
    .option('--json', 'as JSON')
    .option(...STATE_OPTION)
    .action(async (id: string, flags: DeviceFlags) =>
      setCode(await (await import('./device.js')).deviceCommand(id, flags)),
    );
  const logins = program
    .command('logins')
    .description(
      'The session logins that may have failed, counted by every process on the store: `logins list` (the default), `logins clear USER`.',
    );
  refuseUnknownSubcommand(logins);
  logins
    .command('list', { isDefault: true })
    .description('List the logins that may have failed since the last that succeeded, by service and user.')
    .option('--json', 'as JSON')
    .option(...STATE_OPTION)
    .action(async (flags: { json?: boolean; state?: string }) =>
      setCode(await (await import('./logins.js')).listLogins(flags)),
    );
  logins
    .command('clear')
    .description(
      "Forget a user's count, once its password is right: the processes on the store log in again.",
    )
    .argument('<user>', 'the user name (FLEETBOOK_USERNAME)')
    .option('--service <url>', 'only the count on this service (its FLEETBOOK_API_URL, as `logins` lists it)')
    .option(...STATE_OPTION)
    .action(async (user: string, flags: { service?: string; state?: string }) =>
      setCode(await (await import('./logins.js')).clearLogins(user, flags)),
    );
  const store = program
    .command('store')
    .description('The store of FLEETBOOK_STATE: `store migrate`, `store prune`, `store compact`.');
  store
    .command('migrate')
    .description('Apply the schema migrations the store lacks, and print its version.')
    .option(...STATE_OPTION)
    .action(async (flags: StoreFlags) => setCode(await (await import('./store.js')).migrate(flags)));
  store
    .command('prune')
    .description('Remove the runs that ended, and the callbacks processed, before a time.')
    .option(
      '--older-than <duration>',
      'what ended more than this long ago, e.g. 90d (env FLEETBOOK_RETENTION)',
    )
    .option(
      '--playbooks <dir>',
      'the playbooks the daemons run: a backfill of a schedule none of them has any more is pruned too',
    )
    .option(...STATE_OPTION)
    .action(async (flags: StoreFlags) => setCode(await (await import('./store.js')).prune(flags)));
  store
    .command('compact')
    .description('Give the space a SQLite file freed back to the file system.')
    .option('--state <file>', 'the SQLite file (env FLEETBOOK_STATE)')
    .action(async (flags: StoreFlags) => setCode(await (await import('./store.js')).compact(flags)));
  program
    .command('emulator')
    .description('Start the service emulator (prints its URL, credentials and accounts).')
    .option('--port <n>', 'port', '8080')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--seed <s>', 'seed of the world, a number or a word: the same seed gives the same data')
    .option('--accounts <n>', 'number of accounts')
    .option('--devices-per-account <n>', 'devices per account')
    .option('--time-scale <x>', 'simulated seconds per real second (0: only the control API moves time)')
    .action(async (flags: EmulatorFlags) =>
      setCode(await (await import('./emulator.js')).emulatorCommand(flags)),
    );
  program
    .command('actions')
    .description("List every action with its method and path, or print one action's reference.")
    .argument('[action]', 'an action: its arguments, output, errors, retry-safety and an example')
    .option('--json', 'the list as JSON (not with an action)')
    .action(async (action: string | undefined, flags: { json?: boolean }) =>
      setCode(await (await import('./actions.js')).actionsCommand(action, flags)),
    );
  addHelpCommands(program);
  refuseRepeatedOptions(program);
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
