/** The engine actions: steps that do not call the service (their schemas are in engine.ts). */
import { extname } from 'node:path';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { checkInput } from '../api/validate.js';
import { InputError } from '../errors.js';
import { DURATION_TEXT, parseDuration } from '../playbook/duration.js';
import type { LedgerRow, Store } from '../store/store.js';
import { reportSource } from './report-source.js';
import { ledgerTable, listTable, reportText, type ReportFormat, type Table } from './report-table.js';
import { checkReportPath, writeReport } from './reports.js';
import { ENGINE_ACTIONS, isEngineAction } from './engine.js';
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

/**
 * The check of an engine action's rendered arguments against its schema, before it does anything (an
 * InputError, FB_INPUT), and of a report's source: what a dry run checks of an action it only plans.
 */
export function checkEngineInput(action: string, input: Json): void {
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
  if (action === 'report.write') reportSource(input);
}

/**
 * A dry run's check of an engine action it plans, as the real run would refuse it before it acts: its input
 * (checkEngineInput), then the policies that judge where it goes (FB_REFUSED): a webhook's address
 * (FLEETBOOK_WEBHOOK_ALLOW; a name is resolved, once a run in `lookups`, nothing is connected to) and a report's
 * path (inside FLEETBOOK_REPORTS_DIR; nothing is written, not even a directory).
 */
export async function checkEnginePlan(
  action: string,
  input: Json,
  settings: EngineSettings | undefined,
  lookups?: HostLookups,
): Promise<void> {
  checkEngineInput(action, input);
  const s = () => settings ?? (defaults ??= engineSettings());
  if (action === 'notify.webhook')
    await checkWebhook(input as unknown as WebhookInput, s().webhooks, lookups);
  if (action === 'report.write') await checkReportPath(s().reportsDir, String(input.path));
}

/**
 * Runs an engine action on its rendered arguments, once they pass its schema (engine-schemas.ts), checked as an
 * API action's input is before it is sent (api/validate.ts): a value no expression could be typed for at
 * validate time (an element of a list of mixed values, a member of a map) fails the step with FB_INPUT, naming
 * the argument, before the action does anything.
 */
export async function runEngineAction(action: string, input: Json, c: EngineContext): Promise<unknown> {
  checkEngineInput(action, input);
  const settings = () => c.settings ?? (defaults ??= engineSettings());
  switch (action) {
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
      const path = String(input.path);
      const format: ReportFormat =
        (input.format as ReportFormat | undefined) ??
        (extname(path).toLowerCase() === '.json' ? 'json' : 'csv');
      // A wrong source fails here, before the file is opened: an earlier report of that name stays as it was.
      const source = reportSource(input);
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
      const errors =
        input.error === undefined
          ? undefined
          : Array.isArray(input.error)
            ? input.error.map(String)
            : [String(input.error)];
      const since = input.since === undefined ? undefined : sinceOf(input.since);
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
      throw new Error(`unknown engine action ${action}`);
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
