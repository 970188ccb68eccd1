/** Shared set-up of the emulator tests: an emulator on port 0, a client for it, and raw HTTP for bad bodies. */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { createClient, type Client } from '../../src/api/client.js';
import { AREAS, type Area } from '../../src/api/catalog.js';
import type { AreaOptions } from '../../src/rate/area.js';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.js';
import { ApiError } from '../../src/errors.js';

export type Json = Record<string, unknown>;

/** Budgets high enough that the client's rate limits never slow a test down. */
export const FAST = Object.fromEntries(
  AREAS.map((a) => [a, { requestsPerSecond: 100_000, concurrency: 64 }]),
) as Record<Area, AreaOptions>;

export async function emulator(o: EmulatorOptions = {}): Promise<Emulator> {
  return startEmulator({ timeScale: 0, ...o });
}

export function clientFor(emu: Emulator, as: { username?: string; password?: string } = {}): Client {
  return createClient({
    baseUrl: emu.baseUrl,
    clientId: emu.defaults.clientId,
    clientSecret: emu.defaults.clientSecret,
    username: as.username ?? emu.defaults.username,
    password: as.password ?? emu.defaults.password,
    rates: FAST,
    retry: { maxAttempts: 1 },
  });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  text: string;
}

/** Plain HTTP to the emulator, for requests the client would refuse to send. */
export class Raw {
  readonly emu: Emulator;
  private bearer?: string;
  private readonly sessions = new Map<string, string>();

  constructor(emu: Emulator) {
    this.emu = emu;
  }

  async send(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<RawResponse> {
    const res = await request(`${this.emu.url}${path}`, {
      method: method as 'GET',
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.statusCode, headers: res.headers, body: parsed, text };
  }

  async token(): Promise<string> {
    if (this.bearer) return this.bearer;
    const basic = Buffer.from(`${this.emu.defaults.clientId}:${this.emu.defaults.clientSecret}`).toString(
      'base64',
    );
    const r = await this.send('POST', '/api/ts/v1/oauth2/token', 'grant_type=client_credentials', {
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
    });
    this.bearer = String((r.body as Json).access_token);
    return this.bearer;
  }

  async login(username = this.emu.defaults.username, password = this.emu.defaults.password): Promise<string> {
    const r = await this.send(
      'POST',
      '/api/m2m/v1/session/login',
      { username, password },
      {
        authorization: `Bearer ${await this.token()}`,
      },
    );
    if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.text}`);
    return String((r.body as Json).sessionToken);
  }

  async session(username = this.emu.defaults.username): Promise<string> {
    let s = this.sessions.get(username);
    if (!s) {
      const pw =
        username === this.emu.defaults.username ? this.emu.defaults.password : `${username}-password`;
      s = await this.login(username, pw);
      this.sessions.set(username, s);
    }
    return s;
  }

  /** An authenticated API call: path under `/api`. */
  async api(method: string, path: string, body?: unknown, as?: string): Promise<RawResponse> {
    return this.send(method, `/api${path}`, body, {
      authorization: `Bearer ${await this.token()}`,
      'x-m2m-token': await this.session(as),
    });
  }

  async control(method: string, path: string, body?: unknown): Promise<RawResponse> {
    return this.send(method, `/_emulator${path}`, body);
  }

  forget(): void {
    this.sessions.clear();
  }
}

/** One account of `GET /_emulator/accounts`. */
export interface AccountView {
  accountName: string;
  primary: boolean;
  locationRegistered: boolean;
  devices: {
    deviceIds: { id: string; kind: string }[];
    type: string;
    iot: boolean;
    state: string;
    servicePlan: string;
    hasCachedLocation: boolean;
    uuid?: string;
    bleSensors?: { uuid: string; deveui: string; mac: string }[];
  }[];
  rules: { id: string }[];
  notificationGroups: { id: string; userids: string[] }[];
  profiles: { id: string }[];
}

export interface World {
  profile: { ecpdId: string };
  plans: { code: string; name: string }[];
  ratePlanGroups: { id: number }[];
  accounts: AccountView[];
}

export async function world(raw: Raw, devices?: number): Promise<World> {
  const r = await raw.control('GET', `/accounts${devices !== undefined ? `?devices=${devices}` : ''}`);
  return r.body as World;
}

/** What a describe block of emulator tests shares, set in its `before` and closed in its `after`. */
export interface OnWorld {
  emu: Emulator;
  raw: Raw;
  client: Client;
  seed: World;
  /** The first account of the world. */
  account: string;
}

/** Gives the describe block it is called in an emulator with `o`, raw HTTP and a client to it, and its world. */
export function onWorld(o: EmulatorOptions = {}): OnWorld {
  const t = {} as OnWorld;
  before(async () => {
    t.emu = await emulator(o);
    t.raw = new Raw(t.emu);
    t.client = clientFor(t.emu);
    t.seed = await world(t.raw);
    t.account = t.seed.accounts[0]!.accountName;
  });
  after(async () => {
    await t.client.close();
    await t.emu.close();
  });
  return t;
}

export function idOf(d: { deviceIds: { id: string; kind: string }[] }, kind: string): string {
  const id = d.deviceIds.find((x) => x.kind === kind)?.id;
  if (!id) throw new Error(`no ${kind}`);
  return id;
}

/** A device as a request names it: by its IMEI. */
export const imeiOf = (d: { deviceIds: { id: string; kind: string }[] }) => ({
  id: idOf(d, 'imei'),
  kind: 'imei',
});

/** A callback listener on port 0 that records what it receives and answers with `status()`. */
export class Listener {
  readonly received: { headers: IncomingMessage['headers']; text: string; body: Json }[] = [];
  status: () => number = () => 200;
  private server?: Server;
  private waiters: { count: number; resolve: () => void }[] = [];
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        this.received.push({ headers: req.headers, text, body: JSON.parse(text) as Json });
        res.statusCode = this.status();
        res.end();
        for (const w of [...this.waiters])
          if (this.received.length >= w.count) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve();
          }
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/callbacks`;
    return this;
  }

  /** Resolves once `count` messages have arrived; rejects after `ms`. */
  waitFor(count: number, ms = 5000): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`got ${this.received.length} of ${count} callbacks`)), ms);
      this.waiters.push({
        count,
        resolve: () => {
          clearTimeout(t);
          resolve();
        },
      });
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()) ?? r());
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `[status, code, message]` of the API error a call fails with; a call that succeeds fails the test. */
export async function refusal(call: Promise<unknown>): Promise<[number, string, string]> {
  const e = await call.then(
    () => undefined,
    (x: unknown) => x,
  );
  if (!(e instanceof ApiError)) throw new Error(`expected an API error, got ${String(e)}`);
  return [e.status, e.apiCode, e.apiMessage];
}
