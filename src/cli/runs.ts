/**
 * `fleetbook runs`: the run history and per-device outcomes, read from the store. It loads neither the runner,
 * the client nor any schema, so that it answers at once.
 */
import { once } from 'node:events';
import { loadConfig } from '../config.js';
import { SqliteStore } from '../store/sqlite.js';
import type { RunSummary } from '../store/store.js';

/** Something to write text to; a promise means "wait for it before writing more". */
type Write = (s: string) => Promise<void> | undefined;

/**
 * Writes to stdout in chunks of about 64 KB, not a write per line, and waits for stdout to drain when it is
 * full: without that, a slow reader (a pipe, a terminal) would leave the whole output queued in memory.
 */
function bufferedStdout(): { write: Write; flush: () => Promise<void> | undefined } {
  let chunk = '';
  const flush = () => {
    const full = chunk !== '' && !process.stdout.write(chunk);
    chunk = '';
    return full ? once(process.stdout, 'drain').then(() => undefined) : undefined;
  };
  return {
    write: (s) => {
      chunk += s;
      return chunk.length >= 65_536 ? flush() : undefined;
    },
    flush,
  };
}

/**
 * `{ ...head, [key]: rows }` exactly as `JSON.stringify(value, null, 2)` writes it, written as the rows come,
 * so that a run of millions of devices never becomes one string.
 */
export async function writeJsonWithRows(
  write: Write,
  head: object,
  key: string,
  rows: Iterable<unknown>,
): Promise<void> {
  const members = JSON.stringify(head, null, 2);
  // `{}`, or `{\n  ...\n}` whose closing line gives way to the array.
  await write(members === '{}' ? '{' : `${members.slice(0, -2)},`);
  await write(`\n  ${JSON.stringify(key)}: [`);
  let first = true;
  for (const row of rows) {
    await write(`${first ? '' : ','}\n    ${JSON.stringify(row, null, 2).replaceAll('\n', '\n    ')}`);
    first = false;
  }
  await write(first ? ']\n}\n' : '\n  ]\n}\n');
}

export function formatSummary(s: RunSummary): string {
  const lines = [`run ${s.runId} of ${s.playbook}: ${s.status}${s.dryRun ? ' (dry run)' : ''}`];
  if (s.error) lines.push(`  error: ${s.error}`);
  for (const st of s.steps) {
    const d = st.devices;
    // Accepted and unconfirmed devices are named whenever there are any: they are not final successes.
    const pending = (['accepted', 'unconfirmed'] as const)
      .filter((o) => (d[o] ?? 0) > 0)
      .map((o) => `, ${d[o]} ${o}`)
      .join('');
    const devices = d.total
      ? ` devices ${d.total}: ${d.succeeded} succeeded, ${d.failed} failed, ${d.skipped} skipped${pending}`
      : '';
    const by = st.confirmation;
    const confirmed = by
      ? ` (confirmed by callback ${by.callback}, request status ${by.requestStatus}, state read ${by.stateRead})`
      : '';
    lines.push(
      `  ${st.id.padEnd(24)} ${st.status.padEnd(9)} calls ${st.calls}${devices}${confirmed}${st.error ? ` (${st.error})` : ''}`,
    );
    for (const [type, n] of Object.entries(d.byError)) lines.push(`  ${''.padEnd(24)}   ${n} × ${type}`);
  }
  for (const p of s.planned ?? [])
    lines.push(`  would call ${p.action} ${p.calls} time(s) for ${p.devices} device(s) (step ${p.step})`);
  return `${lines.join('\n')}\n`;
}

export async function runsCommand(
  sub: string | undefined,
  id: string | undefined,
  flags: { json?: boolean; devices?: boolean },
): Promise<number> {
  const store = new SqliteStore(loadConfig().state);
  try {
    if (sub === undefined || sub === 'list') {
      const runs = store.listRuns({ limit: 50 });
      if (flags.json)
        process.stdout.write(
          `${JSON.stringify(
            runs.map(({ summary: _s, ...r }) => r),
            null,
            2,
          )}\n`,
        );
      else
        for (const r of runs)
          process.stdout.write(`${r.id}  ${r.startedAt}  ${r.status.padEnd(9)}  ${r.playbook}\n`);
      return 0;
    }
    if (sub === 'show' && id) {
      const run = store.getRun(id);
      if (!run) {
        process.stderr.write(`fleetbook: no run ${id}\n`);
        return 1;
      }
      const head = run.summary ?? run;
      // Device results are streamed from the store and written as they come: a run may have millions.
      const out = bufferedStdout();
      if (flags.json) {
        if (flags.devices)
          await writeJsonWithRows(out.write, head, 'deviceResults', store.eachDeviceResult(id));
        else await out.write(`${JSON.stringify(head, null, 2)}\n`);
      } else {
        await out.write(run.summary ? formatSummary(run.summary) : `run ${run.id}: ${run.status}\n`);
        if (flags.devices) {
          for (const d of store.eachDeviceResult(id))
            await out.write(
              `  ${d.step.padEnd(16)} ${d.deviceId.padEnd(22)} ${d.outcome.padEnd(9)} ${d.errorType ?? ''}\n`,
            );
        }
      }
      await out.flush();
      return 0;
    }
    process.stderr.write('fleetbook: usage: fleetbook runs [list | show ID [--devices]] [--json]\n');
    return 2;
  } finally {
    store.close();
  }
}
