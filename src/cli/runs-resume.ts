/**
 * `fleetbook runs resume ID`: goes on here, in the foreground, with an unfinished run that no live process holds
 * (one a killed `fleetbook run` left, or a daemon that is not coming back), from its checkpoints and with the
 * usual reconciliation, as `fleetbook serve` would take it up: the way on for a run from cron, where no daemon
 * runs. It executes the version of its playbook it was created with, which the store keeps; its secrets are read
 * from the environment, as `fleetbook run` reads them, and those it can still read must be set, or nothing is
 * done. The run is claimed like any orphaned run, so a daemon that takes it up at that moment does not also.
 */
import { unsetSecrets } from '../config.js';
import { playbookOfRun } from '../daemon/versions.js';
import { silentLogger } from '../log.js';
import { planOf } from '../runner/plan.js';
import { secretsStillRead } from '../runner/resume-secrets.js';
import { executeRun, notResumed } from './run-execute.js';
import { secretsFromEnv } from './environment.js';
import { EXIT_USAGE } from './exit-codes.js';
import { findRun } from './runs.js';
import { withStore } from './store-access.js';
import type { Playbook } from '../playbook/schema.js';
import type { RunRecord } from '../store/store.js';

/** The flags of `runs resume`. */
export interface ResumeFlags {
  json?: boolean;
  state?: string;
}

export async function resumeCommand(id: string, flags: ResumeFlags): Promise<number> {
  const secrets = secretsFromEnv(process.env);
  let found: { run: RunRecord; pb: Playbook } | undefined;
  const refused = await withStore(flags, async (store) => {
    const run = await findRun(store, id);
    if (typeof run === 'number') return run;
    const why = await notResumed(store, run);
    if (why) return refuse(why, 1);
    // The version the run was created with, the store's; none kept is said below, in the CLI's words.
    const pb = await playbookOfRun(run, new Map(), store, silentLogger);
    if (!pb)
      return refuse(
        `run ${run.id} of ${run.playbook} has no playbook version in the store to resume with (it is older than the versions fleetbook keeps): \`fleetbook serve\` with ${run.playbook} loaded takes it up, or \`fleetbook runs cancel ${run.id}\` ends it`,
        1,
      );
    // A secret it still reads and nobody set would fail the run at once: said, and the run left as it is.
    const unset = unsetSecrets(secretsStillRead(planOf(pb), await store.loadSteps(run.id)), secrets);
    if (unset) return refuse(`run ${run.id}: playbook ${pb.name} ${unset}`, EXIT_USAGE);
    found = { run, pb };
    return 0;
  });
  if (!found) return refused;
  return executeRun(found.pb, { resume: found.run }, flags, secrets);
}

function refuse(message: string, code: number): number {
  process.stderr.write(`fleetbook: ${message}\n`);
  return code;
}
