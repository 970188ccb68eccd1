/**
 * `fleetbook device ID`: every result the ledger holds for one device, newest first, across every run and step
 * that touched it (Store.deviceHistory), as the console's device page shows it.
 */
import { deviceHistoryRow } from '../console/views.js';
import type { DeviceHistoryRow } from '../store/store.js';
import { aligned, limitOf, returned, withStore } from './store-access.js';
import { EXIT_USAGE } from './exit-codes.js';

/** The flags of `device`. */
export interface DeviceFlags {
  limit?: string;
  json?: boolean;
  state?: string;
}

export async function deviceCommand(id: string, flags: DeviceFlags): Promise<number> {
  // Empty (an unset shell variable), it names no device: "no results" would answer another question.
  if (id.trim() === '') return refuse(`the device id is empty (got ${JSON.stringify(id)}): give a device id`);
  const limit = limitOf(flags.limit);
  if (typeof limit === 'string') return refuse(limit);
  return withStore(flags, async (store) => {
    const results = await store.deviceHistory(id, limit);
    if (flags.json)
      process.stdout.write(
        `${JSON.stringify({ deviceId: id, results: results.map(deviceHistoryRow) }, null, 2)}\n`,
      );
    else process.stdout.write(results.length ? historyText(id, results) : `${noResults(id)}\n`);
    return 0;
  });
}

function refuse(message: string): number {
  process.stderr.write(`fleetbook: ${message}\n`);
  return EXIT_USAGE;
}

/** A device's results as a table, under a line saying how many. */
function historyText(id: string, results: readonly DeviceHistoryRow[]): string {
  const rows = results.map((r) => [
    r.at,
    r.runId,
    r.playbook,
    r.step,
    r.outcome,
    r.errorType ?? returned(r.data),
  ]);
  const head = ['AT', 'RUN ID', 'PLAYBOOK', 'STEP', 'OUTCOME', 'ERROR TYPE OR RESULT'];
  return `device ${id}: ${results.length} result${results.length === 1 ? '' : 's'}, newest first\n${aligned([head, ...rows])}`;
}

/** What is said of a device the ledger holds nothing of: it may be named by another of its identifiers. */
function noResults(id: string): string {
  return `no results recorded for device ${id} (the ledger names a device by the identifier its step sent: an IMEI, an ICCID, ...)`;
}
