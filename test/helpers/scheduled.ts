/**
 * The scheduler tests' makeRun: the queued run the daemon makes for a fire (scheduledRun), of a playbook of the
 * entry's name and schedule, so that the tests check the trigger the daemon stores, not a copy of its shape.
 */
import { scheduledRun, type FireReason, type ScheduleEntry } from '../../src/daemon/scheduler.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import type { Playbook } from '../../src/playbook/schema.js';
import type { RunRecord } from '../../src/store/store.js';

const playbooks = new Map<string, Playbook>();

/** A playbook named `name` that `entry`'s schedule starts, loaded once. */
function playbookOf(entry: ScheduleEntry): Playbook {
  const key = `${entry.playbook}\n${entry.cron}\n${entry.timezone ?? ''}`;
  let pb = playbooks.get(key);
  if (!pb) {
    const zone = entry.timezone ? `, timezone: ${JSON.stringify(entry.timezone)}` : '';
    const yaml = `version: 1
name: ${JSON.stringify(entry.playbook)}
on:
  schedule: { cron: ${JSON.stringify(entry.cron)}${zone} }
steps:
  - { id: hello, uses: log, with: { message: hello } }
`;
    const loaded = loadPlaybook(yaml, `${entry.playbook}.yaml`);
    if (!loaded.playbook) throw new Error(`${entry.playbook}: ${JSON.stringify(loaded.diagnostics)}`);
    pb = loaded.playbook;
    playbooks.set(key, pb);
  }
  return pb;
}

/**
 * The run the daemon's scheduler stores for a fire of `entry` at `at` (of a fire through `through`), made now
 * (Date.now(), faked or not).
 */
export function daemonRun(entry: ScheduleEntry, at: Date, reason: FireReason, through?: Date): RunRecord {
  return scheduledRun(entry, playbookOf(entry), at, reason, {
    owner: 'scheduler-test',
    now: Date.now(),
    ...(through ? { through } : {}),
  });
}
