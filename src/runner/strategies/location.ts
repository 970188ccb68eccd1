/**
 * Locations, per device: a synchronous locate, and a location report (created in batches by the client, its
 * completion polled, its pages read into the ledger as they come). Each located device's result carries its
 * location; each other device, its 7.3 error. The per-device policy retries the failures it names.
 */
import { DeviceResults } from '../device-results.js';
import { groupResults, locationResult, refsOf, withResult } from '../devices.js';
import { readAhead } from '../../util/read-ahead.js';
import { StepError, type Json, type StepState } from '../types.js';
import { withDeviceRetries } from './device-retry.js';
import type { ActionCall } from './index.js';

export async function locate(x: ActionCall): Promise<StepState> {
  const { ctx, step } = x;
  const byMsid = new Map(refsOf(x.devices).map((d) => [d.id, d]));
  const results = new DeviceResults();
  const { output } = await withDeviceRetries(x, results, async (input, attempt) => {
    const at = ctx.clock.now();
    const { value } = await ctx.retrying(step.id, x.plan.retry, x.op, x.signal, () =>
      ctx.call(step.id, x.action, input, x.signal),
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
  const { ctx, step } = x;
  const byMsid = new Map(refsOf(x.devices).map((d) => [d.id, d]));
  const results = new DeviceResults();
  // Without a completion wait or a device policy, the step only creates the reports: its devices succeeded in
  // being requested, and the report's results are read later (location.getReport).
  const reads = Boolean(step.wait || step.devices);
  const { output, ignored } = await withDeviceRetries(x, results, async (input, attempt) => {
    const at = ctx.clock.now();
    const { value } = await ctx.retrying(step.id, x.plan.retry, x.op, x.signal, () =>
      ctx.call(step.id, x.action, input, x.signal),
    );
    const created = value as { reports: Json[] };
    if (!reads) {
      results.add(withResult(x.devices, { outcome: 'succeeded', attempts: attempt }));
      return created;
    }
    await awaitReports(x, String(input.accountName), created.reports);
    for (const r of created.reports) {
      await readReport(x, { accountName: input.accountName, txid: r.txid }, (entries) => {
        const groups = groupResults(
          entries.map((e) => locationResult(e, byMsid, attempt, { cacheMode: input.cacheMode, at })),
        );
        results.add(groups);
        // Each page's results go to the ledger while the next page is already on its way.
        ctx.recordLedger(step.id, groups);
      });
    }
    return created;
  });
  const state = ctx.finishDevices(step.id, output, results.groups());
  // Report results are already in the ledger, page by page; only what the policy changed is written again.
  if (reads) state.ledger = ignored;
  return state;
}

async function readReport(x: ActionCall, which: Json, onPage: (entries: Json[]) => void): Promise<void> {
  const pages = x.ctx.o.client.pages('location.getReport', which, { signal: x.signal });
  for await (const page of readAhead(pages)) {
    x.ctx.stepSummary(x.step.id).calls++;
    onPage(((page as Json).devLocationList as Json[] | undefined) ?? []);
  }
}

/** Polls each report's status until COMPLETED, or the step's completion timeout. */
async function awaitReports(x: ActionCall, accountName: string, reports: Json[]): Promise<void> {
  const { ctx, step, plan } = x;
  const interval = plan.completionPollMs ?? ctx.o.pollIntervalMs ?? 5000;
  const deadline = ctx.clock.now() + plan.completionMs;
  for (const r of reports) {
    let status = String(r.status);
    while (status !== 'COMPLETED') {
      if (ctx.clock.now() + interval > deadline)
        throw new StepError(`report ${String(r.txid)} not completed within ${step.wait?.timeout ?? '2h'}`, [
          'timeout',
        ]);
      await ctx.clock.sleep(interval, x.signal);
      const s = (await ctx.call(
        step.id,
        'location.getReportStatus',
        { accountName, txid: r.txid },
        x.signal,
      )) as Json;
      status = String(s.status);
    }
  }
}
