/**
 * Shared set-up of the runner tests: a real emulator on loopback, a real client for it with generous local
 * budgets, a throwaway SQLite store, the emulator's control API (`/_emulator/calls`, faults, accounts), and a
 * spy that keeps what each action was called with (the client underneath is untouched).
 */
import { expect } from 'chai';
import type { DeviceOutcome, RunSummary, StepSummary } from '../../src/store/store.js';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { createClient, type Client } from '../../src/api/client.js';
import type { Area } from '../../src/api/catalog.js';
import type { Clock } from '../../src/clock.js';
import type { Logger } from '../../src/log.js';
import { startEmulator, type Emulator, type EmulatorOptions, type Faults } from '../../src/emulator/index.js';
import { formatText } from '../../src/playbook/diagnostics.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import type { Playbook } from '../../src/playbook/schema.js';
import { Interrupted, runPlaybook } from '../../src/runner/runner.js';
import type { RunOptions } from '../../src/runner/types.js';
import type { AreaOptions } from '../../src/rate/area.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { Agent, request, type Dispatcher } from 'undici';

export type Json = Record<string, unknown>;

const LOCAL: AreaOptions = { requestsPerSecond: 5000, concurrency: 32 };
/** The emulator is local: budgets far above what a test sends, for every area. */
export const RATES: Record<Area, AreaOptions> = {
  m2m: LOCAL,
  loc: LOCAL,
  subsc: LOCAL,
  dm: LOCAL,
  oauth: LOCAL,
};

export async function emulator(o: EmulatorOptions = {}): Promise<Emulator> {
  return startEmulator({ seed: 1, accounts: 1, devicesPerAccount: 50, timeScale: 0, ...o });
}

export function clientFor(
  emu: Emulator,
  o: { clock?: Clock; rates?: Partial<Record<Area, AreaOptions>>; dispatcher?: Dispatcher } = {},
): Client {
  return createClient({
    baseUrl: emu.baseUrl,
    clientId: emu.defaults.clientId,
    clientSecret: emu.defaults.clientSecret,
    username: emu.defaults.username,
    password: emu.defaults.password,
    rates: { ...RATES, ...o.rates },
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.dispatcher ? { dispatcher: o.dispatcher } : {}),
  });
}

/** `ids` (IMEIs) as a playbook names devices, a YAML flow list: `[{ id: "…", kind: imei }, …]`. */
export const imeiList = (ids: readonly string[]): string =>
  `[${ids.map((id) => `{ id: "${id}", kind: imei }`).join(', ')}]`;

/**
 * A playbook `name` of one step, `suspend`, a devices.suspend of `ids` (IMEIs) of `account`: `step` is more of the
 * step's lines (each after the first indented as the step's members), `tail` what follows the steps.
 */
export const suspendYaml = (name: string, account: string, ids: readonly string[], step = '', tail = '') => `
version: 1
name: ${name}
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with:
      accountName: "${account}"
      devices: ${imeiList(ids)}
    ${step}
${tail}`;

/**
 * Runs `pb` with `o` until `ready` says so (asked every 10 ms, 5 s at most), then stops it as a restart would
 * (Interrupted), and checks that it stopped so: what a resumed run then finds is what that execution left.
 */
export async function interruptedRun(
  pb: Playbook,
  o: RunOptions,
  ready: () => boolean | Promise<boolean>,
): Promise<void> {
  const controller = new AbortController();
  const running = runPlaybook(pb, { ...o, signal: controller.signal });
  let held = false;
  for (let i = 0; i < 500 && !(held = await ready()); i++) await new Promise((r) => setTimeout(r, 10));
  expect(held, 'the run reached the point to interrupt it at').to.equal(true);
  controller.abort(new Interrupted());
  const ended = await running.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(ended, 'the first execution').to.be.instanceOf(Interrupted);
}

/** What `onEmulator` gives a describe block's tests. */
export interface OnEmulator {
  emu: Emulator;
  client: Client;
  store: SqliteStore;
  /** The world's first account. */
  account: string;
}

/**
 * An emulator, a client of it and an in-memory store, for the tests of the describe block that calls this:
 * started before them, closed after. The members are there once the block's `before` hooks run.
 */
export function onEmulator(o: EmulatorOptions = {}): OnEmulator {
  const t = {} as OnEmulator;
  before(async () => {
    t.emu = await emulator(o);
    t.account = t.emu.defaults.accounts[0]!;
    t.client = clientFor(t.emu);
    t.store = memoryStore();
  });
  after(async () => {
    await t.store.close();
    await t.client.close();
    await t.emu.close();
  });
  return t;
}

/** A playbook from YAML text; any error diagnostic fails the test with its `file:line:col` text. */
export function playbook(yaml: string, file = 'test.yaml'): Playbook {
  const loaded = loadPlaybook(yaml, file);
  const errors = loaded.diagnostics.filter((d) => d.severity === 'error');
  if (!loaded.playbook || errors.length) {
    throw new Error(
      `playbook does not load:\n${loaded.diagnostics.map((d) => formatText(d, yaml)).join('\n')}`,
    );
  }
  return loaded.playbook;
}

/**
 * The control API's client keeps no connection between calls. A kept one idle for about the emulator's keep-alive
 * (10 s: a daemon starting on a loaded machine between two calls) could be closed by the emulator as the next
 * call was written on it, which then failed with ECONNRESET.
 */
const controlAgent = new Agent({ pipelining: 0 });

export async function control(emu: Emulator, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await request(`${emu.url}/_emulator${path}`, {
    method: method as Dispatcher.HttpMethod,
    dispatcher: controlAgent,
    ...(body !== undefined
      ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
      : {}),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${method} /_emulator${path}: ${res.statusCode} ${text}`);
  return JSON.parse(text) as unknown;
}

export interface Calls {
  /** Requests per action, as the emulator counted them. */
  actions: Record<string, number>;
  /** Per device (first identifier), every mutation applied to it. */
  devices: Record<string, { action: string; at: string; requestId?: string }[]>;
}

/** `GET /_emulator/calls`. */
export async function calls(emu: Emulator): Promise<Calls> {
  return (await control(emu, 'GET', '/calls')) as Calls;
}

/** `GET /_emulator/calls?devices=0`: the requests per action, without any device's mutations. */
export async function actionCounts(emu: Emulator): Promise<Calls['actions']> {
  return ((await control(emu, 'GET', '/calls?devices=0')) as Calls).actions;
}

/** `PUT /_emulator/faults`: replaces the whole fault set. */
export async function setFaults(emu: Emulator, faults: Partial<Faults>): Promise<void> {
  await control(emu, 'PUT', '/faults', faults);
}

export interface SeedDevice {
  deviceIds: { id: string; kind: string }[];
  type: string;
  iot: boolean;
  state: string;
  hasCachedLocation: boolean;
}

/** The devices of an account as `GET /_emulator/accounts` describes them, in listing order. */
export async function accountDevices(emu: Emulator, account: string, limit?: number): Promise<SeedDevice[]> {
  const q = `?account=${encodeURIComponent(account)}${limit !== undefined ? `&devices=${limit}` : ''}`;
  const body = (await control(emu, 'GET', `/accounts${q}`)) as { accounts: { devices: SeedDevice[] }[] };
  return body.accounts[0]?.devices ?? [];
}

/**
 * How many devices an account of `emu`'s seed needs for exactly `active` of them to be active (the seed decides
 * each device's state); 0 when the account as it is now has fewer.
 */
export async function sizeForActive(emu: Emulator, account: string, active: number): Promise<number> {
  let seen = 0;
  return (await accountDevices(emu, account)).findIndex((d) => d.state === 'active' && ++seen === active) + 1;
}

/** The IMEI of a seeded device (its first identifier, under which the emulator lists its mutations). */
export function imei(d: SeedDevice): string {
  return (d.deviceIds.find((x) => x.kind === 'imei') ?? d.deviceIds[0])!.id;
}

export interface SpiedCall {
  action: string;
  input: Json;
  output?: unknown;
  error?: unknown;
}

/**
 * Keeps every `callByName` of the client (what the runner sends per action, and what came back). The real
 * client does the work; this only watches.
 */
export function spy(client: Client): SpiedCall[] {
  const seen: SpiedCall[] = [];
  const original = client.callByName.bind(client);
  client.callByName = async (name, input, opts) => {
    const call: SpiedCall = { action: name, input: structuredClone(input) as Json };
    seen.push(call);
    try {
      call.output = await original(name, input, opts);
      return call.output;
    } catch (e) {
      call.error = e;
      throw e;
    }
  };
  return seen;
}

/**
 * A clock standing at `t0` whose sleeps last until their signal aborts: a run on it waits where it first sleeps,
 * until it is interrupted. `waiting` gets each sleep asked, in ms.
 */
export function stoppedClock(t0: number, waiting: number[] = []): Clock {
  return {
    now: () => t0,
    sleep: (ms, signal) =>
      new Promise((_, reject) => {
        waiting.push(ms);
        signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
      }),
    timer: () => () => undefined,
  };
}

/** A clock from `t0` whose sleeps end at once, moving it on by what they asked; `slept` gets each, in ms. */
export function skippingClock(t0: number, slept: number[] = []): Clock {
  let now = t0;
  return {
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
    timer: () => () => undefined,
  };
}

/**
 * The runner's clock on the emulator's simulated time: a sleep moves the emulator's clock (which runs only by
 * the control API, timeScale 0) instead of waiting for real.
 */
export function emulatorClock(emu: Emulator): Clock {
  return {
    now: () => emu.now(),
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      emu.advance(ms / 1000);
      await new Promise((resolve) => setImmediate(resolve));
    },
    timer: (ms, fire) => {
      emu.advance(ms / 1000);
      const t = setImmediate(fire);
      return () => clearImmediate(t);
    },
  };
}

/** A throwaway SQLite store (the real one, in memory). */
export function memoryStore(): SqliteStore {
  return new SqliteStore(':memory:');
}

/** Counts of per-device outcomes like the summary's, from a list of `{ outcome, error }` entries. */
export function countOutcomes(entries: { outcome: string; error?: string | undefined }[]): {
  total: number;
  accepted: number;
  succeeded: number;
  failed: number;
  skipped: number;
  unconfirmed: number;
  byError: Record<string, number>;
} {
  const c = {
    total: 0,
    accepted: 0,
    succeeded: 0,
    failed: 0,
    skipped: 0,
    unconfirmed: 0,
    byError: {} as Record<string, number>,
  };
  for (const e of entries) {
    c.total++;
    c[e.outcome as DeviceOutcome]++;
    if (e.error && e.outcome !== 'succeeded') c.byError[e.error] = (c.byError[e.error] ?? 0) + 1;
  }
  return c;
}

export interface LogLine {
  level: string;
  message: string;
  meta: Json;
}

/** A logger that keeps its lines (children add their meta), for asserting what `log` steps wrote. */
export function captureLogger(lines: LogLine[] = [], base: Json = {}): Logger & { lines: LogLine[] } {
  const at =
    (level: string) =>
    (message: string, meta: Json = {}): void => {
      lines.push({ level, message, meta: { ...base, ...meta } });
    };
  return {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (meta) => captureLogger(lines, { ...base, ...meta }),
  };
}

/**
 * Every HTTP answer the clients of this process receive from `origin`, as undici publishes them on its
 * diagnostics channel: `{ status, method, path }`, in order. `stop` unsubscribes.
 */
export function watchAnswers(origin: string): {
  answers: { status: number; method: string; path: string }[];
  stop(): void;
} {
  const answers: { status: number; method: string; path: string }[] = [];
  const onHeaders = (message: unknown) => {
    const m = message as {
      request: { origin?: unknown; method: string; path: string };
      response: { statusCode: number };
    };
    if (String(m.request.origin) === origin)
      answers.push({ status: m.response.statusCode, method: m.request.method, path: m.request.path });
  };
  subscribe('undici:request:headers', onHeaders);
  return { answers, stop: () => unsubscribe('undici:request:headers', onHeaders) };
}

/**
 * Calls `then` once the emulator `emu` of this process has read the whole of the `nth` request (from 1) to
 * `path` (the spec's, without `/api`; a pattern for a path with a part not known ahead, such as a request id)
 * since this call: the emulator holds it for its latency before it acts, and
 * its sender has no answer yet. Node's `http.server.request.start` diagnostics channel names each request as the
 * server reads it; `then` runs in the turn that read its last byte (its head's, for a request with no body).
 * Resolves after `then` has run.
 */
export function onRequestRead(
  emu: Emulator,
  path: string | RegExp,
  nth: number,
  then: () => void,
): Promise<void> {
  const port = Number(new URL(emu.url).port);
  const aimed = (url: string | undefined) =>
    typeof path === 'string' ? url === `/api${path}` : path.test(url?.replace(/^\/api/u, '') ?? '');
  let seen = 0;
  return new Promise((resolve) => {
    const onStart = (message: unknown) => {
      const { request } = message as { request: IncomingMessage };
      if (request.socket.localPort !== port || !aimed(request.url) || ++seen !== nth) return;
      unsubscribe('http.server.request.start', onStart);
      const done = () => {
        then();
        resolve();
      };
      // A request with no body (a GET) is whole once its head is read: its 'end' comes only once the server
      // reads or drops its empty body, which Node does after the answer.
      const length = request.headers['content-length'];
      if (request.headers['transfer-encoding'] === undefined && (length === undefined || length === '0'))
        done();
      else request.once('end', done);
    };
    subscribe('http.server.request.start', onStart);
  });
}

/** `yaml` run on `t`'s emulator and store, its log captured: the summary and the lines. */
export async function runLogged(
  t: OnEmulator,
  yaml: string,
  o: Partial<RunOptions> = {},
): Promise<{ s: RunSummary; lines: LogLine[] }> {
  const logger = captureLogger();
  const s = await runPlaybook(playbook(yaml), { client: t.client, store: t.store, logger, ...o });
  return { s, lines: logger.lines };
}

/** Step `id` of a run summary. */
export const stepOf = (s: RunSummary, id: string): StepSummary =>
  s.steps.find((x) => x.id === id) as StepSummary;

/** The messages of the lines no step logged: what the run's `log` actions said. */
export const unstepped = (lines: LogLine[]): string[] =>
  lines.filter((l) => l.meta.step === undefined).map((l) => l.message);
