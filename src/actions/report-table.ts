/**
 * What a report holds: its rows, its columns and each cell, and its text as CSV or JSON, a chunk at a time. A
 * report of a million devices is written from the rows as they come, a page at a time (the store's, read a few
 * entries at a time, or the playbook's list): no list of them, no string of the whole file; each page lives only
 * while its lines are made.
 */
import type { LedgerRow } from '../store/store.js';
import { MASK, maskable, redactValue } from '../util/secrets.js';
import { isObject } from '../util/json.js';

type Json = Record<string, unknown>;

/** Rows, the columns they have when a step names none, and how a column reads a row. */
export interface Table<R> {
  /** The rows in pages, from the first, each time it is called: once for the default columns, once for the text. */
  rows(): AsyncIterable<readonly R[]>;
  /** The default columns. */
  columns(): Promise<string[]>;
  /** How a column reads a row's value (undefined when it has none): chosen once per column, not per cell. */
  reader(column: string): (row: R) => unknown;
}

/** The columns of per-device results, before those of the data the step returned for each device. */
export const LEDGER_COLUMNS = [
  'runId',
  'step',
  'deviceId',
  'kind',
  'outcome',
  'errorType',
  'errorClass',
  'attempts',
  'at',
  'requestId',
] as const;
const LEDGER: ReadonlySet<string> = new Set(LEDGER_COLUMNS);

/**
 * A column of a row: the key of that name when the row has one, else a dotted path through objects and lists
 * (`carrierInformations.0.state`). Only a row's own keys count: `constructor` is nobody's column.
 */
export function pick(row: unknown, column: string): unknown {
  if (isObject(row) && Object.hasOwn(row, column)) return row[column];
  let v = row;
  for (const part of column.split('.')) {
    if (Array.isArray(v)) v = /^(0|[1-9]\d*)$/.test(part) ? v[Number(part)] : undefined;
    else if (isObject(v) && Object.hasOwn(v, part)) v = v[part];
    else return undefined;
  }
  return v;
}

/** Keys of `rows` in order of first appearance, each named by `name`. */
async function keysOf<R>(
  rows: AsyncIterable<readonly R[]>,
  keys: (row: R) => object | undefined,
  name = (k: string) => k,
): Promise<string[]> {
  const seen = new Set<string>();
  for await (const page of rows)
    for (const row of page) {
      const o = keys(row);
      if (o) for (const k of Object.keys(o)) seen.add(name(k));
    }
  return [...seen];
}

/** The column of a member of a device's data: `data.<key>` when a ledger column has its name. */
const dataColumn = (key: string): string => (LEDGER.has(key) ? `data.${key}` : key);

/**
 * Per-device results (ledger rows): LEDGER_COLUMNS, then one column per key of the devices' data (a location's
 * latitude, longitude, radius, time, cached), in order of first appearance. A data key that is also a ledger
 * column is the column `data.<key>`. Any other column is read from the data, as a key or a dotted path.
 */
export function ledgerTable(rows: () => AsyncIterable<readonly LedgerRow[]>): Table<LedgerRow> {
  return {
    rows,
    columns: async () => [...LEDGER_COLUMNS, ...(await keysOf(rows(), (r) => r.data, dataColumn))],
    reader(column) {
      if (LEDGER.has(column)) return (row) => row[column as keyof LedgerRow];
      const bare = column.startsWith('data.') ? column.slice(5) : undefined;
      return (row) => {
        if (!row.data) return undefined;
        const v = pick(row.data, column);
        return v === undefined && bare !== undefined ? pick(row.data, bare) : v;
      };
    },
  };
}

/**
 * A run's device results as CSV, as report.write writes the ledger: its columns, then one for each member of what
 * the steps returned, found by a first read of `rows`, and the rows by a second (`runs show --csv`, the console's
 * download). A run still going records results between the two: one whose data has a member no row of the first
 * read had (a report whose first batch located no device yet) would lose it, so the CSV fails there, saying so,
 * rather than go on as if it were whole.
 */
export async function* ledgerCsv(rows: () => AsyncIterable<readonly LedgerRow[]>): AsyncGenerator<string> {
  const table = ledgerTable(rows);
  const columns = await table.columns();
  const known = new Set(columns);
  async function* checked() {
    for await (const page of rows()) {
      for (const row of page)
        for (const key of row.data ? Object.keys(row.data) : [])
          if (!known.has(dataColumn(key)))
            throw new Error(
              `the run went on while its CSV was written: ${row.deviceId}'s result in step ${row.step}, recorded since its columns were read, has \`${key}\`, which has no column; write the CSV again (once the run has ended, it is whole)`,
            );
      yield page;
    }
  }
  yield* reportText({ ...table, rows: checked }, 'csv', columns);
}

/** Any list of objects: by default, every key in order of first appearance. */
export function listTable(rows: readonly Json[]): Table<Json> {
  const pages = async function* () {
    yield rows;
  };
  return { rows: pages, columns: () => keysOf(pages(), (r) => r), reader: (c) => (row) => pick(row, c) };
}

// ── text ──────────────────────────────────────────────────────────────────────────────────────────

export type ReportFormat = 'csv' | 'json';

/**
 * Whether a column is named like a secret (password, token, ...): the rule of util/secrets.ts, asked of the
 * name once per report. Its values are masked like a secret field anywhere else.
 */
function secretColumn(name: string): boolean {
  return (redactValue(Object.fromEntries([[name, '-']])) as Json)[name] !== '-';
}

/** How each column reads a row's value, in column order, with secrets masked (util/secrets.ts). */
function cellsOf<R>(table: Table<R>, columns: readonly string[]): ((row: R) => unknown)[] {
  return columns.map((c) => {
    const read = table.reader(c);
    if (!secretColumn(c)) return (row: R) => redactCell(read(row));
    return (row: R) => {
      const v = read(row);
      return maskable(v) ? MASK : redactValue(v);
    };
  });
}

/** A cell with registered secrets removed: a number, a boolean or nothing holds none. */
function redactCell(v: unknown): unknown {
  return v === undefined || v === null || typeof v === 'number' || typeof v === 'boolean'
    ? v
    : redactValue(v);
}

/** Text a spreadsheet would run as a formula; a number written as text is not one. */
const FORMULA = /^[=+\-@\t\r]/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
/** A character that makes a field quoted. Made once: a literal in csvField would be a new object each cell. */
const QUOTED = /[",\r\n]/;

/**
 * A CSV field (RFC 4180): empty for no value; a nested value as its JSON text; quoted when it holds a comma, a
 * quote or a line break. Text that starts like a formula (`=`, `+`, `-`, `@`, tab, CR) and is not a number is
 * written after a `'`, so that a spreadsheet opening the report shows it and does not run it.
 */
export function csvField(v: unknown): string {
  // A number or a boolean is never quoted nor taken for a formula: most of a location report's cells.
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const text = v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  const safe = typeof v === 'string' && FORMULA.test(text) && !NUMBER.test(text) ? `'${text}` : text;
  return QUOTED.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** A header line, then a line per row, the lines of a page at a time. No columns: no text (every line would be empty). */
async function* csvLines<R>(table: Table<R>, columns: readonly string[]): AsyncGenerator<string[]> {
  if (!columns.length) return;
  yield [`${columns.map(csvField).join(',')}\n`];
  const cells = cellsOf(table, columns);
  // One list of a line's fields, filled again for each row: a million rows make no list each.
  const fields = columns.map(() => '');
  for await (const page of table.rows())
    yield page.map((row) => {
      for (let i = 0; i < cells.length; i++) fields[i] = csvField((cells[i] as (row: R) => unknown)(row));
      return `${fields.join(',')}\n`;
    });
}

/** A JSON list of one object per row, one per line, its fields in column order; a missing value is left out. */
async function* jsonLines<R>(table: Table<R>, columns: readonly string[]): AsyncGenerator<string[]> {
  const cells = cellsOf(table, columns);
  let first = true;
  for await (const page of table.rows())
    yield page.map((row) => {
      const values = cells.map((cell) => cell(row));
      // fromEntries defines each key, `__proto__` included, as the data it is.
      const fields = Object.fromEntries(
        columns.flatMap((c, i) => (values[i] === undefined ? [] : [[c, values[i]]])),
      );
      const line = `${first ? '[\n' : ',\n'}${JSON.stringify(fields)}`;
      first = false;
      return line;
    });
  yield [first ? '[]\n' : '\n]\n'];
}

const FORMATS: Record<
  ReportFormat,
  <R>(table: Table<R>, columns: readonly string[]) => AsyncGenerator<string[]>
> = {
  csv: csvLines,
  json: jsonLines,
};

/** Lines joined into chunks of about `size` characters: few writes, and never the whole file at once. */
async function* chunked(pages: AsyncIterable<string[]>, size = 64 * 1024): AsyncGenerator<string> {
  let parts: string[] = [];
  let length = 0;
  for await (const lines of pages)
    for (const line of lines) {
      parts.push(line);
      length += line.length;
      if (length >= size) {
        yield parts.join('');
        parts = [];
        length = 0;
      }
    }
  if (parts.length) yield parts.join('');
}

/** The text of a report of `table` in `format`, in chunks; `columns` default to the table's. */
export async function* reportText<R>(
  table: Table<R>,
  format: ReportFormat,
  columns?: readonly string[],
): AsyncGenerator<string> {
  yield* chunked(FORMATS[format](table, columns ?? (await table.columns())));
}
