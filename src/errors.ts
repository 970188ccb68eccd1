/**
 * The error catalog. Every error fleetbook raises is a FleetbookError with a stable `code` and a retry class;
 * the runner decides by type and class, never by parsing a message. test/client/error-catalog.test.ts checks
 * that codes are unique, documented and used.
 *
 * A device's own error within an answer (spec 7.3: `SVC CACHE UNAVAILABLE`, `SVC DEVICE DATA UNAVAILABLE`,
 * `ABSENT SUBSCRIBER`, ...) is not an error of a call: it is the device's outcome, with a class of its own
 * (transient, remediable, permanent) given by DEVICE_ERRORS in api/device-errors.ts, every row of the spec's
 * table, and documented in docs/errors.md (generated from it).
 */

import { envInstead, redact } from './util/secrets.js';

/** How a failed call may be retried (product.md section 4). */
export type RetryClass = 'retryable' | 'session' | 'permanent';

/** Every code, with the sentence that documents it. */
export const ERROR_CODES = {
  FB_API: 'The service answered with an error status (see status, code, message, retryClass).',
  FB_NETWORK:
    'The request failed below HTTP: refused, reset, timed out. `sent` tells whether it may have reached the service.',
  FB_INPUT:
    'An action input failed its JSON Schema; nothing was sent, and the step counts no attempt for it.',
  FB_UNKNOWN_ACTION: 'No action has that name.',
  FB_LOGIN:
    'Session login was refused, or not sent after 4 in a row that were refused or lost their answers (counted by every process on the store). It is never retried: five failures lock the user; `fleetbook logins clear USER` forgets the count once the password is right.',
  FB_AUTH:
    'The OAuth token request was refused, or the service refused the bearer token (FLEETBOOK_ACCESS_TOKEN, or one fetched again after a refusal); no failed login of the user is counted for it.',
  FB_CONFIG: 'The configuration is missing something or is invalid.',
  FB_ABORTED:
    'The call was cancelled before it completed. `sent` tells whether its request may have reached the service (it had begun to be written).',
  FB_ENV_WITHHELD:
    'An expression read a variable of `env` that fleetbook withholds (its own, or one named like a secret); read it as a secret.',
  FB_EXPRESSION_BUDGET:
    'An expression went over its budget of work (FLEETBOOK_EXPRESSION_BUDGET) and was stopped; it is not retried.',
  FB_LEASE_LOST:
    "This process's lease on the store was lost (not renewed in time: the process was frozen or cut off), and another process may now act on its runs: nothing it wrote since was committed, and it stops.",
  FB_REFUSED:
    'An engine action was refused by policy (a report path outside the reports directory, a webhook not allowed or held back on the embedded emulator, a header fleetbook sets); nothing was written or sent.',
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

export class FleetbookError extends Error {
  readonly code: ErrorCode;
  readonly retryClass: RetryClass;
  /** What a multi-request call had already achieved when it failed (e.g. the report batches created). */
  partial?: unknown;

  constructor(code: ErrorCode, message: string, retryClass: RetryClass, options?: ErrorOptions) {
    // A service may echo a token or password back in an error body: no error ever carries one.
    super(redact(message), options);
    this.name = new.target.name;
    this.code = code;
    this.retryClass = retryClass;
  }

  /** The JSON form `fleetbook call` prints and the run store keeps. */
  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.message, retryClass: this.retryClass };
  }
}

/** Which body shape of spec section 7 an error came in. `opaque`: not JSON, or none of the three. */
export type ErrorBodyShape = 'errorCode' | 'error' | 'error+cause' | 'opaque';

export interface ApiErrorDetails {
  status: number;
  /** `errorCode` or `error` of the body; for an opaque body, `HTTP_<status>`. */
  apiCode: string;
  apiMessage: string;
  action: string;
  shape: ErrorBodyShape;
  errorUrl?: string;
  cause?: string;
  /** Delay the service asked for (Retry-After), in milliseconds. */
  retryAfterMs?: number;
  /** A 401 whose challenge says the bearer token was refused (http.ts refusesBearer). @default false */
  bearerRefused?: boolean;
}

/** The one error type for an error answer of the service (product.md section 4). */
export class ApiError extends FleetbookError {
  readonly status: number;
  readonly apiCode: string;
  readonly apiMessage: string;
  readonly action: string;
  readonly shape: ErrorBodyShape;
  readonly errorUrl?: string;
  readonly apiCause?: string;
  readonly retryAfterMs?: number;
  /**
   * Whether the service said that the request's bearer token was refused (RFC 6750's `invalid_token` challenge),
   * not what the request asked: a login so refused never reached the user's password check.
   */
  readonly bearerRefused: boolean;

  constructor(d: ApiErrorDetails) {
    super(
      'FB_API',
      `${d.action}: HTTP ${d.status} ${d.apiCode}: ${d.apiMessage}`,
      classifyApiError(d.status, d.apiCode, d.apiMessage),
    );
    this.status = d.status;
    this.apiCode = redact(d.apiCode);
    this.apiMessage = redact(d.apiMessage);
    this.action = d.action;
    this.shape = d.shape;
    if (d.errorUrl !== undefined) this.errorUrl = redact(d.errorUrl);
    if (d.cause !== undefined) this.apiCause = redact(d.cause);
    if (d.retryAfterMs !== undefined) this.retryAfterMs = d.retryAfterMs;
    this.bearerRefused = d.bearerRefused === true;
  }

  override toJSON(): Record<string, unknown> {
    return {
      status: this.status,
      code: this.apiCode,
      message: this.apiMessage,
      action: this.action,
      retryClass: this.retryClass,
      shape: this.shape,
      ...(this.apiCause !== undefined ? { cause: this.apiCause } : {}),
      ...(this.errorUrl !== undefined ? { errorUrl: this.errorUrl } : {}),
    };
  }
}

/** The expired-session message of spec section 7.1. */
export const SESSION_EXPIRED_MESSAGE = 'UWS verification failure (The Session has expired.)';

/** Spec 7.1's 401 INVALID_ACCESS message: the session user has no access to the account in the request. */
export const INVALID_ACCESS_MESSAGE = 'The access policy denied the resource operation for this user';

/**
 * retryable: 429, 408, 5xx, INTERNAL_ERROR "Failed to get location"; session: the expired-session message;
 * permanent: every other 4xx.
 */
export function classifyApiError(status: number, code: string, message: string): RetryClass {
  if (message.includes('The Session has expired')) return 'session';
  if (status === 429 || status === 408 || status >= 500) return 'retryable';
  // Spec 7: the location pages give errorCode as the 3-digit HTTP status; the message names the 7.1 row then.
  if ((code === 'INTERNAL_ERROR' || code === String(status)) && message === 'Failed to get location')
    return 'retryable';
  return 'permanent';
}

/** Below HTTP. `sent: false` proves the service never saw the request (refused, DNS, connect timeout). */
export class NetworkError extends FleetbookError {
  readonly action: string;
  readonly sent: boolean;
  readonly causeCode: string;

  constructor(action: string, causeCode: string, sent: boolean, message: string, options?: ErrorOptions) {
    super('FB_NETWORK', `${action}: ${message}`, 'retryable', options);
    this.action = action;
    this.causeCode = causeCode;
    this.sent = sent;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), action: this.action, cause: this.causeCode, sent: this.sent };
  }
}

/**
 * A call cancelled (its signal aborted) while its request was on its way. `sent: false` proves the service never saw
 * it: it was cut off before its first byte was written. A call refused for a cancel before it reached its connection
 * fails with the signal's reason instead.
 */
export class AbortedError extends FleetbookError {
  readonly action: string;
  readonly sent: boolean;

  constructor(action: string, sent: boolean, options?: ErrorOptions) {
    super('FB_ABORTED', `${action}: cancelled`, 'permanent', options);
    this.action = action;
    this.sent = sent;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), action: this.action, sent: this.sent };
  }
}

export interface InputProblem {
  /** JSON path of the offending value, e.g. `/deviceList/3/kind` (`/` for the whole input). */
  path: string;
  message: string;
  /** The validation rule a schema names for this value (`x-rule`), e.g. `duration`. */
  rule?: string;
  /** The problem is the name at `path` (an unknown field, a name refused), not its value. */
  name?: true;
  /**
   * A number or a boolean where a string is wanted, whose text the schema would take (`cacheMode: 0`, the string
   * "0" wanted): that text. YAML read the scalar as another type, and quoting it is the fix.
   */
  asText?: string;
}

/** An action input that failed its schema. Nothing was sent. */
export class InputError extends FleetbookError {
  readonly action: string;
  readonly problems: InputProblem[];

  constructor(action: string, problems: InputProblem[]) {
    const list = problems.map((p) => `  ${p.path}: ${p.message}`).join('\n');
    super('FB_INPUT', `${action}: invalid input\n${list}`, 'permanent');
    this.action = action;
    this.problems = problems;
  }

  override toJSON(): Record<string, unknown> {
    // asText is for validate's wording (playbook/checker.ts), not part of the error as shown.
    const problems = this.problems.map(({ asText: _, ...p }) => p);
    return { ...super.toJSON(), action: this.action, problems };
  }
}

export class UnknownActionError extends FleetbookError {
  readonly suggestions: string[];
  constructor(name: string, suggestions: string[]) {
    const hint = suggestions.length
      ? ` (did you mean ${suggestions.map((s) => `\`${s}\``).join(', ')}?)`
      : '';
    super('FB_UNKNOWN_ACTION', `unknown action \`${name}\`${hint}`, 'permanent');
    this.suggestions = suggestions;
  }
}

export class LoginError extends FleetbookError {
  constructor(message: string, options?: ErrorOptions) {
    super('FB_LOGIN', message, 'permanent', options);
  }
}

export class AuthError extends FleetbookError {
  constructor(message: string, options?: ErrorOptions) {
    super('FB_AUTH', message, 'permanent', options);
  }
}

/**
 * A write of a process whose lease on the store was lost: rolled back, so that a process frozen past its lease
 * never writes over the runs another has taken over since (the store's fence, Ownership in store/store.ts).
 */
export class LeaseLostError extends FleetbookError {
  constructor(owner: string) {
    super(
      'FB_LEASE_LOST',
      `the lease of this process (owner ${owner}) on the store was lost: another process may act on its runs, so nothing more it writes is committed`,
      'permanent',
    );
  }
}

export class ConfigError extends FleetbookError {
  constructor(message: string) {
    super('FB_CONFIG', message, 'permanent');
  }
}

/**
 * An expression that read a variable of `env` fleetbook withholds (util/secrets.ts), chosen at run time
 * (`env[inputs.name]`, which validate cannot see): not `No such key: NAME`, as if it were not set, but that it is
 * withheld, why, and what to read instead.
 */
export class EnvWithheldError extends FleetbookError {
  /** The variable's name. */
  readonly variable: string;

  constructor(variable: string, why: string) {
    super('FB_ENV_WITHHELD', `\`env.${variable}\` is withheld: ${why}; ${envInstead(variable)}`, 'permanent');
    this.variable = variable;
  }
}

/**
 * An expression evaluation that went over its budget of work (expressions/budget.ts), stopped before it could
 * hold the process: a nested map or filter that multiplies its data, or a value built by doubling.
 */
export class ExpressionBudgetError extends FleetbookError {
  /** The expression, as written. */
  readonly expression: string;
  /** The units it could use: the budget, plus what the data it read granted. */
  readonly limit: number;
  /** The budget setting (FLEETBOOK_EXPRESSION_BUDGET). */
  readonly budget: number;

  constructor(expression: string, limit: number, budget: number, perElement: number) {
    const shown = expression.length > 200 ? `${expression.slice(0, 200)}...` : expression;
    // Not toLocaleString: its first call loads the locale data, tens of milliseconds.
    const n = (x: number) => String(x).replace(/\B(?=(\d{3})+$)/g, ',');
    super(
      'FB_EXPRESSION_BUDGET',
      `expression \`${shown}\` went over its budget of ${n(limit)} units of work and was stopped ` +
        `(FLEETBOOK_EXPRESSION_BUDGET is ${n(budget)}, plus ${perElement} per element of the lists and maps of ` +
        `the run's data it reads)`,
      'permanent',
    );
    this.expression = expression;
    this.limit = limit;
    this.budget = budget;
  }
}
