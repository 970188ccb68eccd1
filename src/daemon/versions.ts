/**
 * The playbook a stored run executes (playbook/version.ts): the version it was created with. A run created
 * before the playbook changed (the daemon restarted on an edited file) goes on with the definition the store
 * kept of its version, so that its checkpoints and its steps are of one version; a run of a playbook this
 * daemon does not load (a `fleetbook run` of another file, its process gone) too.
 */
import type { Logger } from '../log.js';
import type { Playbook } from '../playbook/schema.js';
import { versionOf } from '../playbook/version.js';
import type { RunRecord, Store } from '../store/store.js';

/** Definitions read back, by version: one object each, so that its plan is compiled once (runner/plan.ts). */
const kept = new Map<string, Playbook>();

/** Keeps the definitions of the loaded playbooks' versions: before any run of them is created. */
export async function savePlaybookVersions(store: Store, playbooks: Iterable<Playbook>): Promise<void> {
  for (const pb of playbooks) {
    const { version, definition } = versionOf(pb);
    await store.savePlaybookVersion(version, definition);
  }
}

/**
 * The playbook `run` executes: the loaded one when it is the run's version (or the run has none, being older
 * than versions), else the definition of its version the store kept; undefined when there is neither.
 */
export async function playbookOfRun(
  run: RunRecord,
  loaded: ReadonlyMap<string, Playbook>,
  store: Store,
  log: Logger,
): Promise<Playbook | undefined> {
  const current = loaded.get(run.playbook);
  if (run.version === undefined || (current && versionOf(current).version === run.version)) return current;
  let pb = kept.get(run.version);
  if (!pb) {
    const definition = await store.playbookVersion(run.version);
    const meta = { runId: run.id, playbook: run.playbook, version: run.version };
    if (definition === undefined) {
      log.warn(
        'the version this run was created with is not stored: it goes on with the playbook loaded now',
        meta,
      );
      return current;
    }
    pb = JSON.parse(definition) as Playbook;
    kept.set(run.version, pb);
  }
  log.info('the run goes on with the version of its playbook it was created with, not the one loaded now', {
    runId: run.id,
    playbook: run.playbook,
    version: run.version,
    ...(current ? { loaded: versionOf(current).version } : {}),
  });
  return pb;
}
