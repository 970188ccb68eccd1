/**
 * Locations, per device: a synchronous locate, and a location report (created in batches by the client, its
 * completion polled, its pages read into the ledger as they come). Each located device's result carries its
 * location; each other device, its 7.3 error. The per-device policy retries the failures it names.
 */
import { emptyCounts, type DeviceGroup } from '../../store/store.js';
import { eachAtMost } from '../../util/at-most.js';
import { readAhead } from '../../util/read-ahead.js';
import { addCounts, countDevices, item } from '../context.js';
import { DeviceResults } from '../device-results.js';
import { groupResults, locationResult, refsOf, setOfGroups, withResult, type DeviceRef } from '../devices.js';
import type { Cursor, StoredItems } from '../stored-items.js';
import { StepError, type Checkpoint, type CreatedReports, type Json, type StepState } from '../types.js';
import { applyDeviceRules, withDeviceRetries } from './device-retry.js';
import type { ActionCall } from './index.js';

export async function locate(x: ActionCall): Promise<StepState> {
  const { ctx, step } = x;
  const byMsid = new Map(refsOf(x.devices).map((d) => [d.id, d]));
  const results = new DeviceResults();
  const { output } = await withDeviceRetries(x, results, async (input, attempt) => {
    const at = ctx.clock.now();
    const { value } = await ctx.retrying(x.count, x.plan.retry, x.op, x.signal, () =>
      ctx.call(x.count, x.action, input, x.signal),
    );
    const rows = (value as Json[]).map((e) =>
      locationResult(e, byMsid, attempt, { cacheMode: input.cacheMode, at }),
    );
    results.add(groupResults(rows));
    return value;
  });
  return ctx.finishDevices(step.id, output, results.groups());
}

export async function locationReport(x: ActionCall): Promise<StepState> {
  const created = new Created(x);
  if (x.source) return streamedReport(x, x.source, created);
  const results = new DeviceResults();
  const { output, ignored } = await withDeviceRetries(x, results, reportPass(x, results, created));
  const state = x.ctx.finishDevices(x.step.id, output, results.groups());
  // Report results are already in the ledger, page by page; only what the policy changed is written again.
  if (reads(x)) state.ledger = ignored;
  return state;
}

/**
 * Without a completion wait or a device policy, the step only creates the reports: its devices succeeded in
 * being requested, and the report's results are read later (location.getReport).
 */
const reads = (x: ActionCall): boolean => Boolean(x.step.wait || x.step.devices);

/**
 * The reports a step created, batch by batch, each checkpointed as it comes (`reporting`): a run resumed after
 * a restart (a nightly report waits hours for its reports) reads the reports created before it, rather than
 * pay the service's quota for them again and wait for them from the start.
 */
class Created {
  private readonly list: CreatedReports[];

  constructor(private readonly x: ActionCall) {
    this.list = x.resumed?.status === 'reporting' ? [...(x.resumed.reports ?? [])] : [];
  }

  /**
   * The reports of `input`'s devices (the client sends batches of at most 10,000), as batch `batch` (which pass
   * of the step, which devices) created them: earlier, or now.
   */
  async of(batch: string, input: Json): Promise<CreatedReports> {
    const earlier = this.list.find((c) => c.batch === batch);
    if (earlier) return earlier;
    const { ctx, count } = this.x;
    const sentAt = ctx.clock.now();
    const { value } = await ctx.retrying(count, this.x.plan.retry, this.x.op, this.x.signal, () =>
      ctx.call(count, this.x.action, input, this.x.signal),
    );
    const made: CreatedReports = { batch, sentAt, reports: (value as { reports: Json[] }).reports };
    this.list.push(made);
    const checkpoint: Checkpoint = {
      status: 'reporting',
      reports: this.list,
      calls: count.calls,
      attempts: count.attempts,
    };
    ctx.o.store.saveStep(ctx.id, this.x.key, checkpoint);
    return made;
  }
}

/**
 * One pass of the per-device policy over `x.devices` (or the part of them `input` names): the reports
 * created, awaited and read, each page's results into `results` and the ledger as they come.
 */
function reportPass(x: ActionCall, results: DeviceResults, created: Created) {
  const byMsid = new Map(refsOf(x.devices).map((d) => [d.id, d]));
  return async (input: Json, attempt: number): Promise<unknown> => {
    const list = (input.deviceList as { id?: unknown }[] | undefined) ?? [];
    const batch = `pass ${attempt}: ${list.length} devices, ${String(list[0]?.id)} to ${String(list[list.length - 1]?.id)}`;
    const { reports, sentAt: at } = await created.of(batch, input);
    if (!reads(x)) {
      results.add(withResult(x.devices, { outcome: 'succeeded', attempts: attempt }));
      return { reports };
    }
    await readResults(x, reports, byMsid, { attempt, cacheMode: input.cacheMode, at }, (groups) => {
      results.add(groups);
      // Each page's results go to the ledger while the next page is already on its way.
      x.ctx.recordLedger(x.step.id, groups);
    });
    return { reports };
  };
}

/** How many batches of a streamed report are created, or read, at once: a bounded number of devices in memory. */
const WINDOW = 4;

/**
 * A location report of a listing's devices read from the store (StoredItems), in bounded memory whatever their
 * number: the reports of every batch are created first (WINDOW at a time), as for a list in memory; then each
 * batch's devices are read again from the store when its results come (WINDOW batches at a time), and its
 * results go to the ledger and the counts, not to memory. Only the devices a `devices.retry` rule may send
 * again are held (their results), and the rules then run over them as over any list.
 */
async function streamedReport(x: ActionCall, source: StoredItems, made: Created): Promise<StepState> {
  const { ctx, step } = x;
  const counts = emptyCounts();
  const tally = (groups: DeviceGroup[]) => {
    const c = countDevices(groups);
    addCounts(counts, c);
    ctx.countProgress(c);
  };
  const final = (groups: DeviceGroup[]) => {
    ctx.recordLedger(step.id, groups);
    tally(groups);
  };
  const created: { at: Cursor; size: number; sentAt: number; reports: Json[] }[] = [];
  await eachAtMost(source.batches(x.op.batchSize ?? 10_000), WINDOW, async ({ at, set }) => {
    const batch = `stored ${at.seq}.${at.skip}: ${set.size} devices`;
    const { sentAt, reports } = await made.of(batch, { ...x.input, deviceList: refsOf(set) });
    created.push({ at, size: set.size, sentAt, reports });
    if (!reads(x)) final(withResult(set, { outcome: 'succeeded', attempts: 1 }));
  });
  const retried = new Set(x.plan.deviceRetry.flatMap((r) => [...r.on]));
  const again = new DeviceResults();
  await eachAtMost(reads(x) ? created : [], WINDOW, async (c) => {
    const byMsid = new Map(refsOf((await source.read(c.at, c.size)).set).map((d) => [d.id, d]));
    const request = { attempt: 1, cacheMode: x.input.cacheMode, at: c.sentAt };
    await readResults(x, c.reports, byMsid, request, (groups) => {
      const done: DeviceGroup[] = [];
      for (const g of groups) {
        const failed = g.outcome === 'failed' && g.errorType !== undefined;
        if (failed && retried.has(g.errorType as string)) {
          again.add([g]);
          ctx.recordLedger(step.id, [g]);
        } else if (failed && x.plan.ignore.has(g.errorType as string))
          done.push({ ...g, outcome: 'skipped' });
        else done.push(g);
      }
      final(done);
    });
  });
  if (!again.empty) {
    // The devices the rules may send again, as a list of their own: the rules run over it as over any list.
    const devices = setOfGroups(again.groups());
    const y: ActionCall = { ...x, devices, input: { ...x.input, deviceList: refsOf(devices) } };
    delete y.source;
    const { ignored } = await applyDeviceRules(y, again, reportPass(y, again, made));
    ctx.recordLedger(step.id, ignored);
    tally(again.groups());
  }
  return {
    status: 'succeeded',
    output: { reports: created.flatMap((c) => c.reports) },
    items: ctx.keeps(step.id, 'items') ? (await ctx.o.store.deviceResults(ctx.id, step.id)).map(item) : [],
    devices: counts,
  };
}

/**
 * Waits for `reports` to complete, then reads their pages, each page's entries as the devices' results
 * (`byMsid` maps an entry to the device requested) handed to `onPage` as ledger groups.
 */
async function readResults(
  x: ActionCall,
  reports: Json[],
  byMsid: Map<string, DeviceRef>,
  request: { attempt: number; cacheMode: unknown; at: number },
  onPage: (groups: DeviceGroup[]) => void,
): Promise<void> {
  const accountName = x.input.accountName;
  await awaitReports(x, String(accountName), reports, request.at);
  for (const r of reports)
    await readReport(x, { accountName, txid: r.txid }, (entries) =>
      onPage(groupResults(entries.map((e) => locationResult(e, byMsid, request.attempt, request)))),
    );
}

async function readReport(x: ActionCall, which: Json, onPage: (entries: Json[]) => void): Promise<void> {
  const pages = x.ctx.o.client.pages('location.getReport', which, x.ctx.requestsOf(x.count, x.signal));
  for await (const page of readAhead(pages)) {
    onPage(((page as Json).devLocationList as Json[] | undefined) ?? []);
  }
}

/**
 * Polls each report's status until COMPLETED, or the step's completion timeout, counted from when they were
 * asked for (`since`): across a restart too.
 */
async function awaitReports(
  x: ActionCall,
  accountName: string,
  reports: Json[],
  since: number,
): Promise<void> {
  const { ctx, step, plan } = x;
  const interval = plan.completionPollMs ?? ctx.o.pollIntervalMs ?? 5000;
  const deadline = since + plan.completionMs;
  for (const r of reports) {
    let status = String(r.status);
    while (status !== 'COMPLETED') {
      if (ctx.clock.now() + interval > deadline)
        throw new StepError(`report ${String(r.txid)} not completed within ${step.wait?.timeout ?? '2h'}`, [
          'timeout',
        ]);
      await ctx.clock.sleep(interval, x.signal);
      const s = (await ctx.call(
        x.count,
        'location.getReportStatus',
        { accountName, txid: r.txid },
        x.signal,
      )) as Json;
      status = String(s.status);
    }
  }
}
