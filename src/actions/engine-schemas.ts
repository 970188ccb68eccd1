/** The argument schemas of the engine actions (actions/engine.ts), loaded when one is first read. */
import Type from 'typebox';
import { DURATION_PATTERN, DURATION_TEXT } from '../playbook/duration.js';
import { DEVICE_OUTCOMES } from '../store/store.js';

const closed = <P extends Type.TProperties>(props: P, extra: object = {}) =>
  Type.Object(props, { additionalProperties: false, ...extra });

export const LogArgs = closed({
  message: Type.Unknown({
    description: 'A string is logged as it is; any other value (a count, a step output) as its JSON text.',
  }),
  level: Type.Optional(Type.String({ enum: ['debug', 'info', 'warn', 'error'] })),
  fields: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

export const WebhookArgs = closed({
  url: Type.String({ minLength: 1 }),
  method: Type.Optional(Type.String({ enum: ['POST', 'PUT'] })),
  headers: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'Not Host, Content-Length or the hop-by-hop headers (Connection, Transfer-Encoding, ...).',
    }),
  ),
  body: Type.Optional(Type.Unknown()),
});

export const ReportArgs = closed({
  path: Type.String({
    minLength: 1,
    description:
      'Relative to the reports directory (FLEETBOOK_REPORTS_DIR, default ./reports): never absolute, never climbing out with `..`. A report of that name is replaced once the new one is whole (the step note says so, and its output has `replaced: true`); until then, and when writing fails, it stays as it was. A crash part-way leaves a hidden `.NAME.PID@HOST.xxxxxxxx.partial` beside it, which the next write of that name on the same machine removes.',
  }),
  format: Type.Optional(
    Type.String({ enum: ['csv', 'json'], description: 'Default: from the file extension.' }),
  ),
  step: Type.Optional(
    Type.String({
      description:
        'The step whose per-device results to write (its ledger rows, with the data the step returned for each device); default every step of the run. Not with `rows`.',
    }),
  ),
  rows: Type.Optional(
    Type.Array(Type.Record(Type.String(), Type.Unknown()), {
      description:
        'Any list of objects to write, one row each, instead of per-device results, e.g. `${{ steps.sms.output.messages }}`. Not with `step`.',
    }),
  ),
  columns: Type.Optional(
    Type.Array(Type.String({ minLength: 1 }), {
      minItems: 1,
      uniqueItems: true,
      description:
        'The columns to write, in order: a key of each row, or a dotted path into it (`carrierInformations.0.state`). Default: for `rows`, every key in order of first appearance; for per-device results, runId, step, deviceId, kind, outcome, errorType, errorClass, attempts, at, requestId, then each key of the data.',
    }),
  ),
});

export const LedgerQueryArgs = closed({
  playbook: Type.Optional(
    Type.String({ description: 'The playbook (its `name`) whose runs are read. Default: this playbook.' }),
  ),
  step: Type.Optional(
    Type.String({ description: "Only this step's results (its id). Default: every step's." }),
  ),
  outcome: Type.Optional(
    Type.String({
      enum: [...DEVICE_OUTCOMES],
      description: 'Only the devices with this outcome, e.g. `failed`. Default: any outcome.',
    }),
  ),
  error: Type.Optional(
    Type.Union([Type.String(), Type.Array(Type.String())], {
      description:
        "Only the devices recorded with this error type (spec 7.3, e.g. `SVC CACHE UNAVAILABLE`, or one of fleetbook's own) or API error code, whatever their outcome (`failed`, `unconfirmed`, or `skipped`: a type `devices.ignore` names, `LIMIT EXCEEDED`); a list: any of them.",
    }),
  ),
  runs: Type.Optional(
    Type.Union([Type.Literal('last'), Type.Integer({ minimum: 1 })], {
      description:
        "How many of the playbook's finished runs are read, the newest first: `last` (the last one) or a number. Never the run that asks. Default: last.",
    }),
  ),
  since: Type.Optional(
    Type.String({
      pattern: DURATION_PATTERN,
      'x-message': `is not a duration. ${DURATION_TEXT}`,
      description:
        'Only the runs started within this duration back from now, e.g. 24h, or a CEL duration passed whole (`${{ duration("24h") }}`).',
    }),
  ),
});
