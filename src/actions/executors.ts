/** The engine actions: steps that do not call the service (their schemas are in engine.ts). */
import { extname } from 'node:path';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { checkInput } from '../api/validate.js';
import { InputError } from '../errors.js';
import { DURATION_TEXT, parseDuration } from '../playbook/duration.js';
import type { LedgerRow, Store } from '../store/store.js';
import { reportSource, type ReportSource } from './report-source.js';
import { ledgerTable, listTable, reportText, type ReportFormat, type Table } from './report-table.js';
import { checkReportPath, writeReport } from './reports.js';
import { ENGINE_ACTIONS, isEngineAction, type EngineActionName } from './engine.js';
import { engineSettings, type EngineSettings } from './settings.js';
import { checkWebhook, sendWebhook, type HostLookups, type WebhookInput } from './webhook.js';

type Json = Record<string, unknown>;

export interface EngineContext {
  store: Store;
  runId: string;
  playbook: string;
  logger: Logger;
  clock: Clock;
  /** Per-device results of this run, of one step or of all, read from the store as they are iterated. */
  ledger(step?: string): AsyncIterable<LedgerRow[]>;
  /** The step's signal (a cancelled run, the step's timeout): a webhook still waiting is abandoned. */
  signal?: AbortSignal;
  /** The reports directory and the webhook allowlist. @default engineSettings(): ./reports, public addresses only */
  settings?: EngineSettings;
}

let defaults: EngineSettings | undefined;

/** An engine action's rendered arguments once they passed checkEngineInput: what runEngineAction takes. */
export type EngineInput =
  /** `source`: where the report's rows come from. */
  | { action: 'report.write'; input: Json; source: ReportSource }
  /** `since`: the ledger query's, in milliseconds. */
  | { action: 'ledger.query'; input: Json; since?: number }
  | { action: Exclude<EngineActionName, 'report.write' | 'ledger.query'>; input: Json };

/**
 * The check of an engine action's rendered arguments against its schema, before it does anything (an
 * InputError, FB_INPUT), and of what the schema cannot say (a report's source, a ledger query's `since`): made
 * once, before the step's first attempt, for the real run as for a dry run that only plans the action.
 */
export function checkEngineInput(action: string, input: Json): EngineInput {
  if (!isEngineAction(action)) throw new Error(`unknown engine action ${action}`);
  const problems = checkInput(
    {
      action,
      // Read only when the check the build made says no, or is missing: reading it loads the schemas.
      get input() {
        return ENGINE_ACTIONS[action].input;
      },
    },
    input,
    { rendered: true },
  );
  if (problems.length) throw new InputError(action, problems);
  if (action === 'report.write') return { action, input, source: reportSource(input) };
  if (action === 'ledger.query')
    return { action, input, ...(input.since !== undefined ? { since: sinceOf(input.since) } : {}) };
  return { action, input };
}

/**
 * A dry run's check of an engine action it plans, its input checked (checkEngineInput), as the real run would
 * refuse it before it acts: the policies that judge where it goes (FB_REFUSED): a webhook's address
 * (FLEETBOOK_WEBHOOK_ALLOW; a name is resolved, once a run in `lookups`, nothing is connected to) and a report's path (inside
 * FLEETBOOK_REPORTS_DIR; nothing is written, not even a directory).
 */
export async function checkEnginePlan(
  { action, input }: EngineInput,
  settings: EngineSettings | undefined,
  lookups?: HostLookups,
): Promise<void> {
  const s = () => settings ?? (defaults ??= engineSettings());
  if (action === 'notify.webhook')
    await checkWebhook(input as unknown as WebhookInput, s().webhooks, lookups);
  if (action === 'report.write') await checkReportPath(s().reportsDir, String(input.path));
}

/**
 * Runs an engine action on its rendered arguments once they passed its schema (checkEngineInput, checked as an
 * API action's input is before it is sent): a value no expression could be typed for at validate time (an
 * element of a list of mixed values, a member of a map) has failed the step with FB_INPUT, naming the argument,
 * before any attempt.
 */
export async function runEngineAction(e: EngineInput, c: EngineContext): Promise<unknown> {
  const { input } = e;
  const settings = () => c.settings ?? (defaults ??= engineSettings());
  switch (e.action) {
    case 'log': {
      const level = (input.level as 'debug' | 'info' | 'warn' | 'error' | undefined) ?? 'info';
      const { message } = input;
      const text = typeof message === 'string' ? message : (JSON.stringify(message) ?? String(message));
      c.logger[level](text, (input.fields as Json | undefined) ?? {});
      return { message: input.message };
    }
    case 'notify.webhook':
      return sendWebhook(input as unknown as WebhookInput, settings().webhooks, c.signal);
    case 'report.write': {
      const { source } = e;
      const path = String(input.path);
      const format: ReportFormat =
        (input.format as ReportFormat | undefined) ??
        (extname(path).toLowerCase() === '.json' ? 'json' : 'csv');
      const columns = input.columns as string[] | undefined;
      let rows = 0;
      // The rows counted as they are written: a report of the ledger is never a list in memory.
      const text = async function* <R>(table: Table<R>) {
        const names = columns ?? (await table.columns());
        yield* reportText(
          {
            ...table,
            async *rows() {
              for await (const page of table.rows()) {
                rows += page.length;
                yield page;
              }
            },
          },
          format,
          names,
        );
      };
      // The ledger is read once the file is open: a refused path costs no ledger read.
      const { file, replaced } = await writeReport(settings().reportsDir, path, () =>
        'rows' in source
          ? text(listTable(source.rows))
          : text(ledgerTable(() => c.ledger(source.ledger.step))),
      );
      c.logger.info('report written', { path: file, rows, format, ...(replaced ? { replaced } : {}) });
      return { path, file, rows, format, replaced };
    }
    case 'ledger.query': {
      const { since } = e;
      const errors =
        input.error === undefined
          ? undefined
          : Array.isArray(input.error)
            ? input.error.map(String)
            : [String(input.error)];
      const rows = await c.store.queryLedger({
        playbook: (input.playbook as string | undefined) ?? c.playbook,
        ...(input.step !== undefined ? { step: String(input.step) } : {}),
        ...(input.outcome !== undefined ? { outcome: input.outcome as LedgerRow['outcome'] } : {}),
        ...(errors ? { errorTypes: errors } : {}),
        ...(input.runs === undefined || input.runs === 'last'
          ? { lastRuns: 1 }
          : { lastRuns: Number(input.runs) }),
        ...(since !== undefined ? { since: new Date(c.clock.now() - since).toISOString() } : {}),
      });
      // Of the runs asked for, never this one: it has not finished.
      const devices = rows
        .filter((r) => r.runId !== c.runId)
        .map((r) => ({
          id: r.deviceId,
          kind: r.kind,
          outcome: r.outcome,
          error: r.errorType,
          runId: r.runId,
          step: r.step,
        }));
      return { count: devices.length, devices };
    }
    default:
      throw new Error(`unknown engine action ${(e as { action: string }).action}`);
  }
}

/**
 * A ledger query's `since` in milliseconds: a duration as playbooks write it, or as a CEL duration passed whole
 * is sent (`86400s`). Anything else fails the step (FB_INPUT), rather than reading every run.
 */
function sinceOf(since: unknown): number {
  const ms = typeof since === 'string' ? parseDuration(since) : undefined;
  if (ms !== undefined) return ms;
  throw new InputError('ledger.query', [
    { path: '/since', message: `since ${JSON.stringify(since)} is not a duration. ${DURATION_TEXT}` },
  ]);
}
