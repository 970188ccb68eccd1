/**
 * The filters of a run's device results, as the console's device table and `fleetbook runs show` take them: a
 * step, an outcome, an error type, a part of a device id. A step the run's playbook has not, or an error type no
 * device of the run has and fleetbook records under no such name, is a mistake (a misspelt id or type), not a
 * filter that keeps no device: each caller refuses it in its own way, naming what was meant.
 */
import { meantType, RECORDED_DEVICE_TYPES } from '../api/device-errors.js';
import { ERROR_CODES } from '../errors.js';
import { closest } from '../util/closest.js';
import { stepIdsOf } from './run-views.js';
import { devicePage, latestOf, type DeviceCursor } from './device-table.js';
import type { EntryFilter, LedgerRow, RunRecord, Store } from './store.js';

/** The types the catalog knows a device may be recorded with, beside those a service sends of its own. */
const KNOWN_TYPES: readonly string[] = [...RECORDED_DEVICE_TYPES, ...Object.keys(ERROR_CODES)];

/** What is wrong with a filter of `run`'s devices, and which member it is; undefined when nothing is. */
export async function deviceFilterProblem(
  store: Store,
  run: RunRecord,
  filter: EntryFilter,
): Promise<{ member: 'step' | 'errorType'; problem: string } | undefined> {
  const step = await stepProblem(store, run, filter.step);
  if (step) return { member: 'step', problem: step };
  const type = await errorTypeProblem(store, run, filter.errorType);
  return type ? { member: 'errorType', problem: type } : undefined;
}

/** A step the run's playbook version has not, naming its steps. Not checked when the store does not keep it. */
async function stepProblem(
  store: Store,
  run: RunRecord,
  step: string | undefined,
): Promise<string | undefined> {
  if (step === undefined) return undefined;
  const ids = await stepIdsOf(store, run);
  if (!ids || ids.includes(step)) return undefined;
  const near = closest(step, ids, 1);
  return `run ${run.id} (${run.playbook}) has no step \`${step}\`${near.length ? ` (did you mean \`${near[0]}\`?)` : ''}: its steps are ${ids.join(', ')}`;
}

/**
 * An error type that no device of the run has and fleetbook records under no such name, naming the type meant,
 * among the catalog's and the run's (its summary's, once it has ended). A type the catalog knows keeps no device
 * when the run has none; any other is looked up in the store's index of the types, never by reading the run's
 * devices.
 */
async function errorTypeProblem(
  store: Store,
  run: RunRecord,
  type: string | undefined,
): Promise<string | undefined> {
  if (type === undefined || KNOWN_TYPES.includes(type)) return undefined;
  const ran = Object.keys(run.summary?.devices.byError ?? {});
  if (ran.includes(type) || (await store.hasErrorType(run.id, type))) return undefined;
  const meant = meantType(type, [...KNOWN_TYPES, ...ran]);
  const none = `no device of run ${run.id} has error type \`${type}\``;
  return meant?.spec
    ? `${none}: fleetbook records it by its spec name, \`${meant.type}\` (the vendor's prefix is read as SVC)`
    : `${none}, and fleetbook records no such type${meant ? ` (did you mean \`${meant.type}\`?)` : ''}`;
}

/**
 * Devices read at a time by a filter that picks entries (devicePage): an entry of a location report's devices, so
 * that each entry's data is parsed about once.
 */
const PICKED_PAGE = 10_000;

/**
 * The run's device results, a page at a time, those `filter` keeps, each with what its step returned, in bounded
 * memory: `runs show --devices` and the CSVs of a run's devices (`runs show --csv`, the console's download).
 * Unfiltered, or by step only, every result is read, whole and in order (eachDeviceResult). By outcome, error
 * type or device, the store picks the entries that hold such results (their columns compared in SQL, no device
 * list or data parsed but theirs: the few failures of a million-device run cost a read of their entries, not of
 * the run), and their rows are read as the console's table reads them (devicePage). Which result of a device
 * counts is looked up for each page (repeatedAmong), never by grouping the run: a read writes nothing to the
 * store, and an ended run not grouped yet costs no pass over all its devices.
 */
export async function* filteredResults(
  store: Store,
  run: RunRecord,
  filter: EntryFilter | undefined,
): AsyncGenerator<LedgerRow[]> {
  if (filter?.outcome === undefined && filter?.errorType === undefined && filter?.device === undefined) {
    yield* store.eachDeviceResult(run.id, filter?.step);
    return;
  }
  const latest = latestOf(store, run.id, false);
  let after: DeviceCursor | undefined;
  do {
    const page = await devicePage(store, run.id, latest, filter, after, PICKED_PAGE);
    if (page.rows.length) yield page.rows;
    after = page.next;
  } while (after);
}
