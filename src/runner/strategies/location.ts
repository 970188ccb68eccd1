/**
 * Locations, per device: a synchronous locate, and a location report (created in batches by the client, its
 * completion polled, its pages read into the ledger as they come). Each located device's result carries its
 * location; each other device, its 7.3 error. The per-device policy retries the failures it names.
 */
import { addCounts, emptyCounts, type DeviceCounts, type DeviceGroup } from '../../store/store.js';
import { eachAtMost } from '../../util/at-most.js';
import { readAhead } from '../../util/read-ahead.js';
import { countDevices } from '../context.js';
import { DeviceResults } from '../device-results.js';
import { answerRefusal, groupResults, KindsOf, locationResult, refsOf, withResult } from '../devices.js';
import type { Cursor, StoredItems } from '../stored-items.js';
import { StepError, type CreatedReports, type Json, type StepState } from '../types.js';
import {
  beforeRetry,
  finalIgnored,
  FIRST_PASS,
  ignores,
  withDeviceRetries,
  type RetryPass,
} from './device-retry.js';
import type { ActionCall } from './index.js';
import { StoredRetries } from './stored-retries.js';

export async function locate(x: ActionCall): Promise<StepState> {
  const { ctx, step } = x;
  const requested = new KindsOf(x.devices);
  const results = new DeviceResults();
  const { output } = await withDeviceRetries(x, results, FIRST_PASS, async (input, attempt) => {
    const at = ctx.clock.now();
    const { value } = await ctx.retrying(x.count, x.plan.retry, x.op, x.signal, () =>
      ctx.call(x.count, x.action, input, x.signal),
    );
    // The whole answer is read before any of it is recorded: one with a NUL is refused whole.
    const rows = (value as Json[]).map((e, i) =>
      locationResult(e, requested, attempt, { cacheMode: input.cacheMode, at, action: x.action }, i),
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
  const rewrite: DeviceGroup[] = [];
  let passes: Awaited<ReturnType<typeof withDeviceRetries>>;
  try {
    passes = await withDeviceRetries(x, results, FIRST_PASS, reportPass(x, results, created, rewrite));
  } catch (e) {
    x.ctx.recordLedger(x.step.id, rewrite);
    // The pages read are in the ledger already: the failed step counts each device's latest result there (a
    // device whose retry never went out, its earlier failure; one whose failure `ignore` names and no rule sends
    // again, skipped, as the streamed report records it).
    if (reads(x)) x.ctx.countFailing(x.count, results.groups());
    throw e;
  }
  const { output, ignored } = passes;
  const state = x.ctx.finishDevices(x.step.id, output, results.groups());
  // Report results are already in the ledger, page by page; only what the policy changed is written again.
  if (reads(x)) state.ledger = [...rewrite, ...ignored];
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
    // One an earlier version checkpointed with a NUL (SQLite kept it) is refused as a new one is.
    if (earlier) return this.refuseNul(earlier);
    const { ctx, count } = this.x;
    const sentAt = ctx.clock.now();
    const { value } = await ctx.retrying(count, this.x.plan.retry, this.x.op, this.x.signal, () =>
      ctx.call(count, this.x.action, input, this.x.signal),
    );
    // Refused before it is checkpointed: each device is recorded under its report's txid.
    const made = this.refuseNul({ batch, sentAt, reports: (value as { reports: Json[] }).reports });
    this.list.push(made);
    ctx.saveUnderWay(count, this.x.key, { status: 'reporting', reports: this.list });
    return made;
  }

  /** `made`, unless a report's txid has a NUL character: the answer is refused (MalformedAnswer). */
  private refuseNul(made: CreatedReports): CreatedReports {
    for (const r of made.reports) {
      const refused = answerRefusal(this.x.action, r.txid, 'txid', 'no report id');
      if (refused) throw refused;
    }
    return made;
  }
}

/**
 * One pass of the per-device policy over `x.devices` (or the part of them `input` names): the reports
 * created, awaited and read, each page's results into `results` and the ledger as they come. A device whose
 * failure `ignore` names and no later pass sends again is recorded `skipped` at once, as the streamed report
 * records it: the ledger says the same of it whether or not a later pass fails the step. Those of a page an
 * earlier execution recorded go to `rewrite`, to be written again when the step ends: an earlier version
 * recorded them failed, and skipped only then.
 */
function reportPass(x: ActionCall, results: DeviceResults, created: Created, rewrite: DeviceGroup[]) {
  const requested = new KindsOf(x.devices);
  return async (input: Json, attempt: number, rule: number): Promise<unknown> => {
    const list = (input.deviceList as { id?: unknown }[] | undefined) ?? [];
    const batch = `pass ${attempt}: ${list.length} devices, ${String(list[0]?.id)} to ${String(list[list.length - 1]?.id)}`;
    const { reports, sentAt: at } = await created.of(batch, input);
    if (!reads(x)) {
      results.add(withResult(x.devices, { outcome: 'succeeded', attempts: attempt }));
      return { reports };
    }
    await readResults(
      x,
      reports,
      requested,
      { attempt, cacheMode: input.cacheMode, at },
      (page, recorded) => {
        const groups = finalIgnored(x, page, { rule, attempt });
        results.add(groups);
        // Each page's results go to the ledger while the next page is already on its way.
        if (!recorded) x.ctx.recordLedger(x.step.id, groups);
        else rewrite.push(...groups.filter((g, i) => g !== page[i]));
      },
    );
    return { reports };
  };
}

/** How many batches of a streamed report are created, or read, at once: a bounded number of devices in memory. */
const WINDOW = 4;

/**
 * A location report of a listing's devices read from the store (StoredItems), in bounded memory whatever their
 * number: a pass over the list, then a pass of each `devices.retry` rule's attempts over the devices it sends
 * again, which are written to lists of their own in the store as the results come (StoredRetries). Each
 * device's final result goes to the ledger and the counts, not to memory; a device sent again has its result
 * in the ledger too, which the later one overrides.
 */
async function streamedReport(x: ActionCall, source: StoredItems, made: Created): Promise<StepState> {
  const { ctx, step } = x;
  const counts = emptyCounts();
  /**
   * The devices sent again, by the error of the result the ledger holds for them until their retry's comes: not
   * in `counts`, but failed with that error should the step fail before their retry's result comes.
   */
  const waiting = new Map<string, number>();
  const wait = (type: string, n: number) => waiting.set(type, (waiting.get(type) ?? 0) + n);
  const retries = new StoredRetries(x);
  const first: RetryPass = { rule: -1, attempt: 1 };
  const passOver = (list: StoredItems, input: Json, pass: RetryPass, name: string) =>
    streamedPass(
      x,
      made,
      list,
      input,
      pass,
      name,
      retries.beginPass(),
      (groups, chunk, recorded, wasOf) => {
        const done: DeviceGroup[] = [];
        const sentAgain: DeviceGroup[] = [];
        for (const g of groups) {
          // A device sent again: its list says the error it was sent again for (StoredRetries).
          if (pass.rule >= 0)
            for (const id of g.ids) {
              const was = wasOf(id);
              if (was !== undefined) wait(was, -1);
            }
          if (retries.take(g, pass, chunk)) {
            sentAgain.push(g);
            wait(g.errorType as string, g.ids.length);
          } else if (ignores(x, g)) done.push({ ...g, outcome: 'skipped' });
          else done.push(g);
        }
        if (!recorded) ctx.recordLedger(step.id, [...sentAgain, ...done]);
        const c = countDevices(done);
        addCounts(counts, c);
        ctx.countProgress(c);
      },
      (chunk) => retries.written(chunk),
    );
  let reports: Json[];
  try {
    reports = await passOver(source, x.input, first, 'stored');
    for (const pass of retries.passesOfRules()) {
      const list = retries.list(pass);
      if (!list) continue;
      const overrides = await beforeRetry(x, pass.of, list.size, pass.attempt);
      await passOver(list, { ...x.input, ...overrides }, pass, `retry ${pass.rule + 1}.${pass.attempt}`);
    }
  } catch (e) {
    // The pages read are in the ledger already: the failed step counts each device's latest result there.
    ctx.addFailing(x.count, withWaiting(counts, waiting));
    throw e;
  }
  retries.clear();
  return {
    status: 'succeeded',
    output: { reports },
    items: ctx.keeps(step.id, 'items') ? await ctx.ledgerItems(step.id) : [],
    devices: counts,
  };
}

/** `counts`, and the devices `waiting` for their retry, failed with the error they were sent again for. */
function withWaiting(counts: DeviceCounts, waiting: Map<string, number>): DeviceCounts {
  const c = { ...counts, byError: { ...counts.byError } };
  for (const [type, n] of waiting) {
    if (!n) continue;
    c.total += n;
    c.failed += n;
    c.byError[type] = (c.byError[type] ?? 0) + n;
  }
  return c;
}

/**
 * One pass over a stored list: the reports of every batch created first (WINDOW at a time), as for a list in
 * memory; then each batch's devices read again from the store when its results come (WINDOW batches at a time),
 * each page's results handed to `onPage` with the batch's chunk number (`chunkOf` its index) and the error each
 * of its devices was sent again for (of a list of devices sent again), and `onRead` told when a batch is read.
 * Returns the reports, in the order of the batches.
 */
async function streamedPass(
  x: ActionCall,
  made: Created,
  list: StoredItems,
  input: Json,
  pass: RetryPass,
  name: string,
  chunkOf: (batch: number) => number,
  onPage: (
    groups: DeviceGroup[],
    chunk: number,
    recorded: boolean,
    wasOf: (id: string) => string | undefined,
  ) => void,
  onRead: (chunk: number) => void,
): Promise<Json[]> {
  const created: { chunk: number; at: Cursor; size: number; sentAt: number; reports: Json[] }[] = [];
  await eachAtMost(numbered(list.batches(x.op.batchSize ?? 10_000)), WINDOW, async ({ n, at, set }) => {
    const { sentAt, reports } = await made.of(`${name} ${at.seq}.${at.skip}: ${set.size} devices`, {
      ...input,
      deviceList: refsOf(set),
    });
    created.push({ chunk: chunkOf(n), at, size: set.size, sentAt, reports });
    if (reads(x)) return;
    // Requested: under the batch's report, which an earlier execution may have recorded them under already.
    const txid = String(reports[0]?.txid);
    const recorded = ((await recordedUnder(x, [txid])).get(txid) ?? 0) >= set.size;
    onPage(
      withResult(set, { outcome: 'succeeded', attempts: pass.attempt, requestId: txid }),
      chunkOf(n),
      recorded,
      () => undefined,
    );
  });
  created.sort((a, b) => a.chunk - b.chunk);
  await eachAtMost(reads(x) ? created : [], WINDOW, async (c) => {
    const { set } = await list.read(c.at, c.size);
    const requested = new KindsOf(set);
    // Looked up as the results come, apart from their kinds: in the order of the results' groups.
    const sent = new KindsOf(set);
    const wasOf = (id: string) => sent.groupOf(id)?.was;
    const request = { attempt: pass.attempt, cacheMode: input.cacheMode, at: c.sentAt };
    await readResults(x, c.reports, requested, request, (groups, recorded) =>
      onPage(groups, c.chunk, recorded, wasOf),
    );
    onRead(c.chunk);
  });
  return created.flatMap((c) => c.reports);
}

/** The batches with their place in the list, from 0. */
async function* numbered<T>(items: AsyncIterable<T>): AsyncGenerator<T & { n: number }> {
  let n = 0;
  for await (const item of items) yield { ...item, n: n++ };
}

/**
 * Waits for `reports` to complete, then reads their pages, each page's entries as the devices' results (the
 * kind of the device an entry names from `requested`), under the report's txid, handed to `onPage` as ledger
 * groups, with whether the ledger has them already. A run resumed after a restart reads again the reports an
 * earlier execution created, to count their devices and send the failed ones again, but must not record twice
 * the pages that execution recorded: a page's results go to the ledger together, in one commit, and a report's
 * pages come in order, so the devices the ledger holds under its txid are those of its first pages.
 */
async function readResults(
  x: ActionCall,
  reports: Json[],
  requested: KindsOf,
  request: { attempt: number; cacheMode: unknown; at: number },
  onPage: (groups: DeviceGroup[], recorded: boolean) => void,
): Promise<void> {
  const accountName = x.input.accountName;
  await awaitReports(x, String(accountName), reports, request);
  const txids = reports.map((r) => String(r.txid));
  const recorded = await recordedUnder(x, txids);
  for (const txid of txids) {
    let left = recorded.get(txid) ?? 0;
    const under = { ...request, requestId: txid, action: 'location.getReport', list: 'devLocationList' };
    await readReport(x, { accountName, txid }, (entries) => {
      // A page is read whole before any of it is recorded: one with a NUL is refused whole.
      const groups = groupResults(
        entries.map((e, i) => locationResult(e, requested, request.attempt, under, i)),
      );
      const n = groups.reduce((sum, g) => sum + g.ids.length, 0);
      onPage(groups, left >= n && n > 0);
      left = Math.max(0, left - n);
    });
  }
}

/** How many of the step's device results the ledger holds under each of `txids`: none unless the run resumed. */
async function recordedUnder(x: ActionCall, txids: string[]): Promise<Map<string, number>> {
  const recorded = new Map<string, number>();
  if (x.resumed)
    for (const g of await x.ctx.o.store.resultsUnder(x.ctx.id, x.step.id, txids))
      if (g.outcome !== 'accepted')
        recorded.set(g.requestId as string, (recorded.get(g.requestId as string) ?? 0) + g.ids.length);
  return recorded;
}

async function readReport(x: ActionCall, which: Json, onPage: (entries: Json[]) => void): Promise<void> {
  const pages = x.ctx.o.client.pages('location.getReport', which, x.ctx.requestsOf(x.count, x.signal));
  for await (const page of readAhead(pages)) {
    onPage(((page as Json).devLocationList as Json[] | undefined) ?? []);
  }
}

/**
 * Polls each report's status until COMPLETED, or the step's completion timeout, counted from when they were
 * asked for (`since`): across a restart too. Every report is created QUEUED (public-api-facts.md); that of a
 * cacheMode 0 request (the default) is available at once, so its status is read at once, and only a report not
 * yet completed then is asked again each interval. One of cacheMode 1 or 2 is first asked after an interval.
 */
async function awaitReports(
  x: ActionCall,
  accountName: string,
  reports: Json[],
  request: { cacheMode: unknown; at: number },
): Promise<void> {
  const { ctx, step, plan } = x;
  const interval = plan.completionPollMs ?? ctx.o.pollIntervalMs ?? 5000;
  const deadline = request.at + plan.completionMs;
  const atOnce = String(request.cacheMode ?? '0') === '0';
  for (const r of reports) {
    let status = String(r.status);
    let waits = !atOnce;
    while (status !== 'COMPLETED') {
      if (waits) {
        if (ctx.clock.now() + interval > deadline)
          throw new StepError(`report ${String(r.txid)} not completed within ${step.wait?.timeout ?? '2h'}`, [
            'timeout',
          ]);
        await ctx.clock.sleep(interval, x.signal);
      }
      waits = true;
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
