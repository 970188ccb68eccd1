/** What an entry of the action catalog is (../catalog.ts merges the entries of every area). */
import type Type from 'typebox';

/** One rate budget per API area, shared by everything in the process (product.md 5). */
export type Area = 'm2m' | 'loc' | 'subsc' | 'dm' | 'oauth';
export const AREAS: readonly Area[] = ['m2m', 'loc', 'subsc', 'dm', 'oauth'];
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** Which of the three error body shapes of spec section 7 the operation documents. */
export type ErrorShape = 'errorCode' | 'error' | 'error+cause';
export type Json = Record<string, unknown>;

export interface Operation {
  /** `area.verb`, the name `uses:` and `fleetbook call` take. */
  readonly action: string;
  readonly summary: string;
  readonly area: Area;
  readonly method: Method;
  /** Path under `{base_url}`, with `{param}` placeholders filled from the input. */
  readonly path: string;
  /** A different path for some inputs (listing triggers by account or by id). */
  readonly route?: (input: Json) => string;
  /** What the action takes. */
  readonly input: Type.TSchema;
  /** One request body as sent, when it differs from `input` (batches). */
  readonly request?: Type.TSchema;
  /**
   * What a playbook step may give, when it is narrower than `input`: a step of a device action names exactly the
   * devices it acts on (no device group, no filter that narrows them), since the engine locks, records and
   * confirms each.
   */
  readonly stepInput?: Type.TSchema;
  /** What the action returns, after every page or batch. */
  readonly output: Type.TSchema;
  /** What the action returns for a 2xx answer with no body, when the spec gives that one a meaning. */
  readonly whenEmpty?: () => unknown;
  /** One page's response, for paged actions. */
  readonly page?: Type.TSchema;
  /**
   * How the next page is asked for: by index (`startIndex`), after the largest device id seen
   * (`largestDeviceIdSeen`), by the `?next=` token of the answer's `Location` header (`next`), or from the last
   * item's time (`earliest`, connection history).
   */
  readonly paging?: 'startIndex' | 'largestDeviceIdSeen' | 'next' | 'earliest';
  /** Input members sent in the query string rather than the path or the body (`next`). */
  readonly query?: readonly string[];
  /** Changes state at the service: skipped by dry-run, counted by `limits`. */
  readonly mutating: boolean;
  /**
   * May be sent again after an unknown outcome (sent, no answer): read-only, or idempotent in effect. A call
   * that is not retry-safe is retried only when the error proves the request never reached the service
   * (connection refused, 429, 503).
   */
  readonly retrySafe: boolean;
  /**
   * Removes something (retry-safe), so that a repeat may find it gone: `notFound` matches the message of the
   * refusal that says what the call names is not there, `answer` is what the call answers instead. A repeat of a
   * call whose earlier attempt may have reached the service (sent and its answer lost, a 5xx, the client's retry
   * or a step's; a run resumed after it was sent) refused so succeeds with `answer`: that attempt removed it. A
   * first attempt refused so fails: what it names does not exist (docs/spec-decisions.md).
   */
  readonly removes?: { readonly notFound: RegExp; readonly answer: (input: Json) => unknown };
  readonly errorShape: ErrorShape;
  /** Can report per-device errors of spec section 7.3 in its results. */
  readonly deviceErrors?: boolean;
  /**
   * Mutating, but names its devices only to read them (a location report): it changes nothing about them, so it
   * takes no per-device lock.
   */
  readonly onlyReadsDevices?: boolean;
  /** Rewrites the spellings the spec contradicts itself on to the one the examples use (docs/spec-decisions.md). */
  readonly normalize?: (input: Json) => Json;
  /**
   * How the runner executes the action (src/runner/strategies): `call` (the default) sends it and takes the
   * answer; `deviceState` changes devices, answers a request id, and has each device's outcome confirmed
   * (CarrierService callback, request status, or the devices' state); `listing` reads devices page by page;
   * `locate` and `locationReport` return a location or an error per device, with per-device retries.
   */
  readonly strategy?: Strategy;
  /** `deviceState`: the devices.list selection of the devices in the state the action leaves them in. */
  readonly applied?: (input: Json) => Json;
  /** The member that names devices when it is not `devices` or `deviceList`: a list of `{ id, kind }` or of IMEIs. */
  readonly devicesIn?: string;
  /**
   * The member that must name at least one device (its schema's `minItems`; a test holds the two equal): given
   * as an empty list, the runner sends nothing and the step is skipped, saying why. Declared, not read from the
   * schema, so that a run of a valid playbook never loads the schemas.
   */
  readonly needsDevices?: 'devices' | 'deviceList' | 'deviceIds';
  /**
   * Answers `{ requestId }` (its output schema is RequestAccepted; a test holds the two equal): an asynchronous
   * request, followed by that id. A 2xx answer without one is refused (MALFORMED ANSWER). Declared, not read from
   * the schema, so that a run of a valid playbook never loads the schemas.
   */
  readonly answersRequestId?: true;
  /** Devices per request when the client splits an input into batches: a dry run plans that many calls. */
  readonly batchSize?: number;
}

export type Strategy = 'call' | 'deviceState' | 'listing' | 'locate' | 'locationReport';

/** A path parameter as it goes into a URL. */
export function enc(v: unknown): string {
  return encodeURIComponent(String(v));
}
