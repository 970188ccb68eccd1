/**
 * Where the engine actions may write and what they may send, judged on the text alone: `fleetbook validate`
 * applies these checks to literal values (checker.ts), and the actions apply them again at run time to the
 * values computed from expressions (reports.ts, webhook.ts). Node built-ins only: validate loads this module.
 */
import { posix, win32 } from 'node:path';
import { FleetbookError } from '../errors.js';
import { ledgerQueryStatic } from './ledger-static.js';
import { reportSourceStatic } from './report-source.js';

/** The setting that names the reports directory. */
export const REPORTS_DIR_SETTING = 'FLEETBOOK_REPORTS_DIR';
/** The setting that allows webhooks to addresses that are not public. */
export const WEBHOOK_ALLOW_SETTING = 'FLEETBOOK_WEBHOOK_ALLOW';
/** The setting that sends webhooks from the embedded emulator, which holds them back by default. */
export const EMULATOR_WEBHOOKS_SETTING = 'FLEETBOOK_EMULATOR_WEBHOOKS';

/** An engine action refused by policy: nothing was written or sent. Never retried. */
export class RefusedError extends FleetbookError {
  /** The action refused, e.g. `report.write`. */
  readonly action: string;
  /**
   * The setting that decides it (FLEETBOOK_REPORTS_DIR, FLEETBOOK_WEBHOOK_ALLOW, FLEETBOOK_EMULATOR_WEBHOOKS),
   * when one does.
   */
  readonly setting?: string;

  constructor(action: string, message: string, setting?: string) {
    super('FB_REFUSED', `${action}: ${message}`, 'permanent');
    this.action = action;
    if (setting !== undefined) this.setting = setting;
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      action: this.action,
      ...(this.setting !== undefined ? { setting: this.setting } : {}),
    };
  }
}

// ── report paths ──────────────────────────────────────────────────────────────────────────────────

/**
 * Why `path` cannot name a file inside the reports directory, or undefined when it can. A report path is
 * relative to the reports directory, uses `/` between directories, and never climbs above it: `a/../b.csv` is
 * `b.csv`, `../b.csv` is refused (judged on the text, whatever the directory is called).
 */
export function reportPathProblem(path: string, shown = JSON.stringify(path)): string | undefined {
  if (posix.isAbsolute(path) || win32.isAbsolute(path))
    return `path ${shown} is absolute: a report path is relative to the reports directory`;
  if (path.includes('\\')) return `path ${shown} has a backslash: separate directories with /`;
  if (path.includes('\0')) return `path ${shown} has a NUL character`;
  const normal = posix.normalize(path);
  if (normal === '..' || normal.startsWith('../'))
    return `path ${shown} climbs out of the reports directory with ..`;
  if (normal === '.' || normal === './' || path.endsWith('/'))
    return `path ${shown} names a directory, not a file`;
  return undefined;
}

export interface StaticProblem {
  /** Below the action's `with`, e.g. `['headers', 'Host']`. */
  path: (string | number)[];
  /** Where to point: the key (a header's name) or its value. */
  where: 'key' | 'value';
  /** `with`: arguments that cannot work as written, e.g. two sources of a report's rows (report-source.ts). */
  rule: 'report-path' | 'webhook-header' | 'with' | 'error-type';
  message: string;
  severity: 'error' | 'warning';
}

/**
 * A literal `report.write` path outside the reports directory, or a path with expressions whose literal start
 * is already outside it (`/tmp/${{ run.id }}.csv`, `../${{ x }}`): everything after an expression is judged at
 * run time. `reports/...` is a warning: with paths relative to the reports directory it writes to
 * `reports/reports/...`, which is rarely what was meant.
 */
function reportPathStatic(args: Record<string, unknown>): StaticProblem[] {
  const path = args.path;
  if (typeof path !== 'string' || path === '') return [];
  const at = (message: string, severity: 'error' | 'warning' = 'error'): StaticProblem[] => [
    { path: ['path'], where: 'value', rule: 'report-path', message: `report.write: ${message}`, severity },
  ];
  const cut = path.indexOf('${{');
  const literal = cut === -1 ? path : path.slice(0, cut);
  // Of a computed path, the text before the first expression, up to its last `/`: whole directory names,
  // judged as they are (with a stand-in file name). What comes after an expression is judged at run time.
  const absolute = posix.isAbsolute(literal) || win32.isAbsolute(literal);
  const judged =
    cut === -1 ? path : absolute ? `${literal}x` : `${literal.slice(0, literal.lastIndexOf('/') + 1)}x`;
  const problem = reportPathProblem(judged, JSON.stringify(path));
  if (problem) return at(`${problem} (${REPORTS_DIR_SETTING}, default ./reports)`);
  if (/^(\.\/)?reports\//.test(literal))
    return at(
      `path ${JSON.stringify(path)} starts with reports/, but it is relative to the reports directory (${REPORTS_DIR_SETTING}, default ./reports): with the default it writes to ./reports/reports/ (drop the prefix)`,
      'warning',
    );
  return [];
}

// ── webhook headers ───────────────────────────────────────────────────────────────────────────────

/**
 * Headers a webhook step cannot set: `Host` is the URL's host (a different one would reach another virtual
 * host of the address connected to), the length and framing are fleetbook's, and the hop-by-hop headers
 * (RFC 9110 section 7.6.1) belong to the connection, not to the message.
 */
export const FIXED_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
  'expect',
]);

/** Why a webhook step cannot set header `name`; undefined when it can. */
export function headerProblem(name: string): string | undefined {
  const lower = name.trim().toLowerCase();
  if (!FIXED_HEADERS.has(lower)) return undefined;
  return lower === 'host'
    ? `header \`${name}\` cannot be set: it is always the URL's host`
    : `header \`${name}\` cannot be set: fleetbook sets the framing and connection headers itself`;
}

function webhookStatic(args: Record<string, unknown>): StaticProblem[] {
  const headers = args.headers;
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return [];
  const problems: StaticProblem[] = [];
  for (const name of Object.keys(headers)) {
    const problem = headerProblem(name);
    if (problem)
      problems.push({
        path: ['headers', name],
        where: 'key',
        rule: 'webhook-header',
        message: `notify.webhook: ${problem}`,
        severity: 'error',
      });
  }
  return problems;
}

/**
 * The checks of literal arguments, by action: what `fleetbook validate` can refuse before any run. A report's
 * one source of rows is checked here too (report-source.ts), beside its path.
 */
const STATIC_CHECKS: Readonly<Record<string, (args: Record<string, unknown>) => StaticProblem[]>> = {
  'report.write': (args) => [...reportPathStatic(args), ...reportSourceStatic(args)],
  'notify.webhook': webhookStatic,
  'ledger.query': ledgerQueryStatic,
};

/** The problems `fleetbook validate` finds in the literal arguments of `action` (none for most actions). */
export function staticProblems(action: string, args: unknown): StaticProblem[] {
  const checks = Object.hasOwn(STATIC_CHECKS, action) ? STATIC_CHECKS[action] : undefined;
  if (!checks || args === null || typeof args !== 'object' || Array.isArray(args)) return [];
  return checks(args as Record<string, unknown>);
}
