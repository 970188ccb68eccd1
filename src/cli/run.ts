/** `fleetbook run PLAYBOOK`: its checks, then (run-execute.ts) the run. */
import { unsetSecrets } from '../config.js';
import { parseIsoTime } from '../clock.js';
import { fireAt } from '../daemon/fire-time.js';
import { localRun, type LocalRun } from '../daemon/local-event.js';
import { scheduleTrigger } from '../daemon/scheduler.js';
import { formatText } from '../playbook/diagnostics.js';
import { loadPlaybookText } from '../playbook/load.js';
import type { Playbook } from '../playbook/schema.js';
import { decodeSource } from '../playbook/source.js';
import type { NewRun } from '../runner/factory.js';
import { describeMismatch, JSON_EXAMPLE, PLACEHOLDER, pronoun, type InputWording } from '../runner/inputs.js';
import { planOf } from '../runner/plan.js';
import { TEST_SUFFIX } from '../util/files.js';
import { secretsFromEnv } from './environment.js';
import { readNamedBytes, readNamedFile } from './named-file.js';
import { EXIT_USAGE } from './exit-codes.js';

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
    return EXIT_USAGE;
  }
  const loaded = loadPlaybookText(decodeSource(await readNamedBytes(file, `playbook ${file}`), file));
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error');
  if (!loaded.playbook || errors.length) {
    for (const d of loaded.diagnostics) process.stderr.write(`${formatText(d, loaded.source)}\n`);
    return EXIT_USAGE;
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
  const secrets = secretsFromEnv(process.env);
  const unset = unsetSecrets(planOf(pb).secrets, secrets);
  if (typeof start === 'string' || unset) {
    if (typeof start === 'string') process.stderr.write(`fleetbook: ${start}\n`);
    if (unset) process.stderr.write(`fleetbook: playbook ${pb.name} ${unset}\n`);
    return EXIT_USAGE;
  }
  return (await import('./run-execute.js')).executeRun(pb, start, flags, secrets);
}
