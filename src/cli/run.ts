/** `fleetbook run PLAYBOOK` and `fleetbook emulator`. */
import { engineSettings } from '../actions/settings.js';
import { createClient } from '../api/client.js';
import { loadConfig, stateOrigin, unsetSecrets } from '../config.js';
import { parseIsoTime } from '../clock.js';
import { fireAt } from '../daemon/fire-time.js';
import { localRun, type LocalRun } from '../daemon/local-event.js';
import { scheduleTrigger } from '../daemon/scheduler.js';
import { checkCredentials, connect, onEmbeddedEmulator } from '../connect.js';
import { setExpressionBudget } from '../expressions/cel.js';
import { createLogger } from '../log.js';
import { formatText } from '../playbook/diagnostics.js';
import { loadPlaybookText } from '../playbook/load.js';
import type { Playbook } from '../playbook/schema.js';
import { decodeSource } from '../playbook/source.js';
import { parseDuration } from '../playbook/duration.js';
import { startRun, type NewRun } from '../runner/factory.js';
import { describeMismatch, JSON_EXAMPLE, PLACEHOLDER, pronoun, type InputWording } from '../runner/inputs.js';
import { StoreDeviceLocks } from '../runner/locks.js';
import { heldWebhooksNotice } from '../runner/held-webhooks.js';
import { planOf } from '../runner/plan.js';
import { Interrupted, type Progress } from '../runner/runner.js';
import { RateShares } from '../rate/shares.js';
import { Lease } from '../store/lease.js';
import { openStore } from '../store/open.js';
import { everyStep } from '../store/run-views.js';
import type { RunSummary } from '../store/store.js';
import { TEST_SUFFIX } from '../util/files.js';
import { SECRET_PREFIX, envWithheld, registerSecret } from '../util/secrets.js';
import { formatSummary } from './runs.js';
import { listenError } from './listen-error.js';
import { readNamedBytes, readNamedFile } from './named-file.js';
import { unpolledWaits, unreachable } from '../runner/wait.js';
import type { EmulatorOptions, Wording } from '../emulator/index.js';

export interface RunFlags {
  input?: string[];
  /** A callback event as the service posts it, from a file, or `-` for stdin. */
  event?: string;
  /** A fire time of the playbook's schedule: the run the scheduler starts for it (a backfill). */
  scheduledAt?: string;
  dryRun?: boolean;
  json?: boolean;
  /** The SQLite file or PostgreSQL URL, in place of FLEETBOOK_STATE. */
  state?: string;
}

/** `--input k=v` pairs. */
export function parseInputs(pairs: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new Error(`--input takes key=value, got ${JSON.stringify(p)}`);
    const key = p.slice(0, eq);
    // Given twice, neither is more the one meant than the other.
    if (Object.hasOwn(out, key))
      throw new Error(
        `--input ${key} is given twice (${JSON.stringify(out[key])} and ${JSON.stringify(p.slice(eq + 1))}): give it once`,
      );
    out[key] = p.slice(eq + 1);
  }
  return out;
}

/**
 * Secrets for `${{ secrets.X }}`: the variables FLEETBOOK_SECRET_X. One set empty (a deployment's
 * `$UNSET_VARIABLE`) is not set: a run that needs it is refused before it acts, rather than fail at its step.
 */
export function secretsFromEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith(SECRET_PREFIX) && v !== undefined && v !== '') {
      out[k.slice(SECRET_PREFIX.length)] = v;
      registerSecret(v);
    }
  }
  return out;
}

/** `${{ env.X }}`: the environment, without fleetbook's own variables and anything named like a secret. */
export function envForExpressions(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && envWithheld(k) === undefined) out[k] = v;
  }
  return out;
}

/**
 * Inputs as `--input` gives them. A value its type does not take: an array or an object as quoted JSON. Every
 * `--input` is text, so text that is JSON of another kind (one id, `"a"`, `{}` for an array) is told the same. A
 * missing one: the flag of each, a list's or an object's quoted (the shell would read `[...]` as a pattern).
 */
const flagWording: InputWording = {
  mismatch: (m) => {
    const example = JSON_EXAMPLE[m.type];
    return example
      ? `input \`${m.input}\` is an ${m.type}: pass it as JSON, e.g. --input '${m.input}=${example}' (got ${JSON.stringify(m.got)})`
      : describeMismatch(m);
  },
  missing: (missing) =>
    `give ${pronoun(missing)} with ${missing
      .map(({ name, type }) => {
        const flag = `${name}=${PLACEHOLDER[type]}`;
        return `--input ${JSON_EXAMPLE[type] ? `'${flag}'` : flag}`;
      })
      .join(' ')}`,
};

/**
 * The run a schedule of `pb` starts for its fire at `text` (`--scheduled-at`): a backfill of a fire the daemon
 * did not run, with the trigger the scheduler gives (scheduleTrigger) and, as a fire's run, no inputs of its
 * own. Refused for a time not written in full with its offset, a playbook no schedule starts, a time its
 * schedules do not fire at (in the words of `fleetbook test`), and a fire still to come.
 */
function backfill(pb: Playbook, text: string): NewRun | string {
  const at = parseIsoTime(text);
  if (at === undefined)
    return `--scheduled-at takes a date and time with its offset (2026-11-30T02:00:00-05:00, 2026-11-30T07:00:00Z), got ${JSON.stringify(text)}`;
  const fire = fireAt(pb, at, text);
  if ('problem' in fire)
    return `--scheduled-at: ${fire.problem}${fire.unscheduled ? ' (run it without --scheduled-at)' : ''}`;
  if (at > Date.now()) return `--scheduled-at ${text} is still to come: the schedule starts that run then`;
  return { trigger: scheduleTrigger(fire.entry, new Date(at), 'backfill'), inputs: {} };
}

/** What starts the run: the event of `--event` (`-`: stdin), the fire of `--scheduled-at`, or `--input`'s inputs. */
async function runStart(pb: Playbook, flags: RunFlags): Promise<NewRun | string> {
  const inputs = parseInputs(flags.input);
  if (flags.scheduledAt !== undefined) {
    if (flags.event !== undefined)
      return '--event and --scheduled-at do not go together: a scheduled run starts without an event';
    if (Object.keys(inputs).length)
      return '--input and --scheduled-at do not go together: a scheduled run starts without inputs of its own (with their defaults)';
    return backfill(pb, flags.scheduledAt);
  }
  if (flags.event === undefined) return unlessRefused(localRun(pb, { inputs }, flagWording));
  if (Object.keys(inputs).length)
    return '--input and --event do not go together: a callback starts its run without inputs';
  const text = await readNamedFile(flags.event, `--event ${flags.event}`);
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch (e) {
    return `--event ${flags.event}: not JSON: ${(e as Error).message}`;
  }
  const run = unlessRefused(localRun(pb, { event }));
  return typeof run === 'string' ? `--event ${flags.event}: ${run}` : run;
}

function unlessRefused(run: LocalRun): NewRun | string {
  return 'refused' in run ? run.refused : run;
}

export async function runCommand(file: string, flags: RunFlags): Promise<number> {
  // A playbook test is no playbook: said, as validate says it, not checked against the playbook schema.
  if (file.endsWith(TEST_SUFFIX)) {
    process.stderr.write(`fleetbook: ${file} is a playbook test, not a playbook: fleetbook test runs it\n`);
    return 2;
  }
  const loaded = loadPlaybookText(decodeSource(await readNamedBytes(file, `playbook ${file}`), file));
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error');
  if (!loaded.playbook || errors.length) {
    for (const d of loaded.diagnostics) process.stderr.write(`${formatText(d, loaded.source)}\n`);
    return 2;
  }
  const pb = loaded.playbook;
  let start: NewRun | string;
  try {
    start = await runStart(pb, flags);
  } catch (e) {
    start = (e as Error).message;
  }
  // A secret the playbook names and nobody set would fail the run at its step, after the steps before acted.
  // Said with what is wrong with the event or the inputs, if anything: both at once.
  const unset = unsetSecrets(planOf(pb).secrets, secretsFromEnv(process.env));
  if (typeof start === 'string' || unset) {
    if (typeof start === 'string') process.stderr.write(`fleetbook: ${start}\n`);
    if (unset) process.stderr.write(`fleetbook: playbook ${pb.name} ${unset}\n`);
    return 2;
  }
  const config = loadConfig(process.env, flags.state ? { state: flags.state } : {});
  setExpressionBudget(config.expressionBudget);
  const engine = engineSettings({ ...config, embedded: onEmbeddedEmulator(config) });
  const tty = Boolean(process.stderr.isTTY) && !flags.json;
  const logger = createLogger({ level: tty ? 'warn' : config.logLevel });
  // A dry run plans its waits: it never reaches one.
  if (!flags.dryRun)
    for (const w of unpolledWaits(pb))
      logger.warn(`step \`${w.step}\` will fail when reached: ${unreachable(w.service)}`, w);
  // Credentials that cannot reach the service record no run: refused before the store is opened (or created).
  checkCredentials(config);
  // Opened before the embedded emulator starts: a state file that cannot be opened (exit 2) would otherwise leave
  // the emulator's server holding the process open.
  const store = await openStore(config.state, { origin: stateOrigin(process.env, flags) });
  const target = await connect(config, logger);
  const notice = flags.dryRun
    ? undefined
    : heldWebhooksNotice(engine.webhooks, [pb], secretsFromEnv(process.env), envForExpressions(process.env));
  // On a terminal the log shows warnings only: the line is written as the CLI's own, not dropped.
  if (notice) {
    if (tty) process.stderr.write(`fleetbook: ${notice}\n`);
    else logger.info(notice);
  }
  // A mutation leaves only while the lease holds: frozen past it, this process sends nothing more.
  const held: { lease?: Lease } = {};
  const client = createClient({
    ...target.options,
    logger,
    beforeMutation: () => held.lease?.check(),
    // The service's logins are counted with those of every process on the store; the embedded emulator is this
    // process's own.
    ...(target.emulator ? {} : { logins: store.logins }),
  });
  const controller = new AbortController();
  // Ends the `finally` of the cancelled run (RunOptions.stop).
  const stop = new AbortController();
  // This run is this process's: a daemon on the same state file neither adopts it nor acts on its devices
  // while the lease holds. Lost (the process froze past it), the run stops where it is, unfinished.
  const lease = await Lease.acquire({
    store,
    role: 'run',
    exclusive: false,
    leaseMs: parseDuration(config.lease) ?? 15_000,
    onLost: (e) => {
      controller.abort(new Interrupted(e.message));
      stop.abort(e);
    },
    // A cancel asked by another process (`fleetbook runs cancel`, a daemon's console): as a first Ctrl-C.
    onRenew: () =>
      void store.cancelRequests(lease.id).then(
        ([asked]) => {
          if (asked && !controller.signal.aborted) controller.abort(new Error(asked.reason));
        },
        (e: unknown) =>
          logger.warn('reading the cancels asked of this run failed', { error: (e as Error).message }),
      ),
  });
  held.lease = lease;
  // The API areas' budgets are shared with the other processes on the store (a daemon, replicas).
  const shares = new RateShares({
    owner: lease.id,
    board: store.rates,
    areas: client.areas,
    onError: (e) => logger.warn('exchanging the shared rate budgets failed; retrying', { error: e.message }),
  });
  if (store.replicas) shares.start();
  // The progress bar is for a person at a terminal: off one, its module is never loaded.
  const cliProgress = tty ? (await import('cli-progress')).default : undefined;
  const bar = cliProgress
    ? new cliProgress.SingleBar(
        {
          format: ' {bar} {value}/{total} devices | {calls} calls | {errors} errors | {step}',
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  bar?.start(0, 0, { calls: 0, errors: 0, step: '' });
  // A signal cancels the run, whose `finally` then runs; a second one stops that too; a third ends the process.
  const onSignal = () => {
    if (!controller.signal.aborted) return controller.abort(new Error('cancelled by signal'));
    stop.abort(new Error('stopped by a second signal'));
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let summary: RunSummary;
  try {
    const services = {
      client,
      store,
      logger,
      engine,
      owner: lease.id,
      locks: new StoreDeviceLocks(store, lease.id),
      secrets: secretsFromEnv(process.env),
      env: envForExpressions(process.env),
      ...(target.pollIntervalMs ? { pollIntervalMs: target.pollIntervalMs } : {}),
    };
    summary = await startRun(services, pb, {
      ...start,
      dryRun: Boolean(flags.dryRun),
      signal: controller.signal,
      stop: stop.signal,
      ...(bar
        ? {
            onProgress: (p: Progress) => {
              bar.setTotal(Math.max(p.devicesTotal, 1));
              bar.update(p.devicesDone, { calls: p.calls, errors: p.errors, step: p.step });
            },
          }
        : {}),
    });
  } finally {
    bar?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await shares.stop();
    await lease.release();
    await store.close();
    await client.close();
    await target.close();
  }
  // Every step of the playbook, those the run never reached `unreached`, as `runs show` prints it.
  summary = { ...summary, steps: everyStep(summary.steps, pb) };
  if (flags.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  else process.stdout.write(formatSummary(summary));
  return summary.status === 'succeeded' ? 0 : 1;
}

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
    return 2;
  }
  process.stdout.write(`${emu.banner()}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await emu.close();
  return 0;
}
