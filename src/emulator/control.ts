/**
 * The control API under `/_emulator` (product.md section 6): reset, accounts, faults, clock, calls, plus
 * read-only views of callback deliveries, notifications and the carrier's record of asynchronous requests. It needs no authentication and is never
 * subject to faults.
 */
import { takesOnly, unknownName } from '../util/query.js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { locationUsed } from './location.js';
import { parseFaults } from './faults.js';
import { advance, catchUp } from './simulation.js';
import { OptionError, timeScaleProblem } from './limits.js';
import { ClockLimit, iso } from './sim-clock.js';
import type { Core, EmulatorState } from './state.js';

/** What a reset may change, as given (a request's body): the reset checks it. */
export type ResetOptions = Partial<Record<'seed' | 'accounts' | 'devicesPerAccount' | 'timeScale', unknown>>;

/**
 * Replaces the state with a fresh one; what the options leave out keeps its current value. Throws OptionError
 * (limits.ts), and keeps the state, when an option is out of its limits.
 */
export type ResetFn = (o: ResetOptions) => EmulatorState;

/** A route's query parameters, as takesOnly lets them through: each given once, and not empty. */
type Params = Record<string, string | undefined>;

const DEVICE_LIMIT_PROBLEM = 'devices must be an integer from 0 up';

/** A query's `devices=N` (how many devices to describe): Infinity when not given, undefined when not a number. */
function deviceLimit(devices: string | undefined): number | undefined {
  if (devices === undefined) return Infinity;
  return /^\d+$/.test(devices) ? Number(devices) : undefined;
}

function fail(reply: FastifyReply, status: number, error: string) {
  return reply.code(status).send({ error });
}

/**
 * A request's body as a JSON object (none is `{}`), with only the fields in `fields` when it is given: a field
 * that is none of a request's is refused, not left out (`{ "sed": 5 }` would reset the world of seed 1).
 */
function parse(
  body: unknown,
  fields?: readonly string[],
): { value: Record<string, unknown> } | { error: string } {
  if (body === undefined || body === null || body === '') return { value: {} };
  let v: unknown;
  try {
    v = typeof body === 'string' ? (JSON.parse(body) as unknown) : body;
  } catch {
    return { error: 'Invalid JSON' };
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    return { error: 'the body must be a JSON object' };
  const unknown = fields && unknownName('field', Object.keys(v), fields);
  return unknown ? { error: unknown } : { value: v as Record<string, unknown> };
}

/** Everything a test needs to know about the seeded world, with up to `limit` devices per account. */
export function describeAccounts(core: Core, limit: number, only?: string): Record<string, unknown> {
  const st = core.state;
  const w = st.world;
  const now = st.now();
  const store = st.devices;
  return {
    seed: w.seed,
    now: iso(now),
    profile: w.profile,
    clients: w.clients.map((c) => ({ clientId: c.clientId, clientSecret: c.clientSecret })),
    users: w.users.map((u) => ({ ...u, locked: st.locked.has(u.username) })),
    plans: w.plans,
    ratePlanGroups: w.ratePlanGroups,
    accounts: w.accounts
      .filter((a) => only === undefined || a.name === only)
      .map((a) => {
        const devices: Record<string, unknown>[] = [];
        for (const n of store.inOrder(a.index)) {
          if (devices.length >= limit) break;
          const seed = n < w.total;
          const device: Record<string, unknown> = {
            deviceIds: store.deviceIds(n),
            type: store.type(n),
            iot: store.iot(n),
            state: store.stateOf(n),
            servicePlan: store.planOf(n),
            hasCachedLocation: store.hasCachedLocation(n),
          };
          if (seed && (device.type === 'sensor' || device.type === 'gateway')) {
            device.uuid = w.deviceUuid(n);
            const ble = w.bleSensors(n);
            if (ble.length)
              device.bleSensors = ble.map((x) => ({
                uuid: w.bleUuid(x),
                deveui: w.deveui(x),
                mac: w.bleMac(x),
              }));
          }
          devices.push(device);
        }
        const ex = st.exclusionsOf(a.index);
        return {
          accountName: a.name,
          primary: a.primary,
          managed: st.managed.has(a.name),
          locationRegistered: st.locationRegistered.has(a.name),
          billCycleDay: a.billCycleDay,
          locationSubscription: a.locationSubscription,
          locationUsed: locationUsed(st, a.index, now),
          exclusions: { allDevice: ex.allDevice, count: ex.list.length },
          deviceCount: store.countIn(a.index),
          devices,
          rules: [...st.rules.values()]
            .filter((r) => r.account === a.name)
            .map((r) => ({ id: r.id, name: r.record.name })),
          notificationGroups: [...st.groups.values()]
            .filter((g) => g.account === a.name)
            .map((g) => ({ id: g.id, name: g.name, userids: g.userids })),
          profiles: [...st.profiles.values()]
            .filter((p) => p.account === a.name)
            .map((p) => ({ id: p.id, name: p.record.name, kind: p.record.kind })),
        };
      }),
  };
}

export function registerControl(app: FastifyInstance, core: Core, reset: ResetFn): void {
  app.post('/_emulator/reset', { preValidation: takesOnly() }, async (req, reply) => {
    const body = parse(req.body, ['seed', 'accounts', 'devicesPerAccount', 'timeScale']);
    if ('error' in body) return fail(reply, 400, body.error);
    const { seed, accounts, devicesPerAccount, timeScale } = body.value;
    let st: EmulatorState;
    try {
      st = reset({ seed, accounts, devicesPerAccount, timeScale });
    } catch (e) {
      if (e instanceof OptionError) return fail(reply, 400, e.message);
      throw e;
    }
    // The old world is garbage now: collected here (when node runs with --expose-gc, as the benchmarks start
    // it), it does not pause the next test's requests at some random point.
    (globalThis as { gc?: () => void }).gc?.();
    return {
      seed: st.world.seed,
      accounts: st.world.accounts.map((a) => a.name),
      devicesPerAccount: st.world.devicesPerAccount,
      now: iso(st.now()),
    };
  });

  app.get<{ Querystring: Params }>(
    '/_emulator/accounts',
    { preValidation: takesOnly('devices', 'account') },
    async (req, reply) => {
      const q = req.query;
      const limit = deviceLimit(q.devices);
      if (limit === undefined) return fail(reply, 400, DEVICE_LIMIT_PROBLEM);
      const names = core.state.world.accounts.map((a) => a.name);
      if (q.account !== undefined && !names.includes(q.account))
        return fail(
          reply,
          404,
          `no account ${JSON.stringify(q.account)}: this world has ${names.join(', ')}`,
        );
      return describeAccounts(core, limit, q.account);
    },
  );

  app.put('/_emulator/faults', { preValidation: takesOnly() }, async (req, reply) => {
    const body = parse(req.body);
    if ('error' in body) return fail(reply, 400, body.error);
    const faults = parseFaults(body.value);
    if (typeof faults === 'string') return fail(reply, 400, faults);
    core.state.setFaults(faults);
    return faults;
  });

  app.get('/_emulator/faults', { preValidation: takesOnly() }, async () => core.state.faults);

  app.post('/_emulator/clock/advance', { preValidation: takesOnly() }, async (req, reply) => {
    const body = parse(req.body, ['seconds']);
    if ('error' in body) return fail(reply, 400, body.error);
    try {
      advance(core, body.value.seconds as number);
    } catch (e) {
      if (e instanceof ClockLimit) return fail(reply, 400, e.message);
      throw e;
    }
    return { now: iso(core.state.now()) };
  });

  app.get('/_emulator/clock', { preValidation: takesOnly() }, async () => {
    catchUp(core, false);
    return { now: iso(core.state.now()), timeScale: core.state.clock.timeScale };
  });

  app.put('/_emulator/clock', { preValidation: takesOnly() }, async (req, reply) => {
    const body = parse(req.body, ['timeScale']);
    if ('error' in body) return fail(reply, 400, body.error);
    const { value } = body;
    const scale = value.timeScale;
    const problem = timeScaleProblem(scale);
    if (problem) return fail(reply, 400, problem);
    core.state.clock.setTimeScale(scale as number);
    return { now: iso(core.state.now()), timeScale: scale };
  });

  app.get<{ Querystring: Params }>(
    '/_emulator/calls',
    { preValidation: takesOnly('device', 'devices') },
    async (req, reply) => {
      const st = core.state;
      const { device, devices } = req.query;
      const limit = deviceLimit(devices);
      if (limit === undefined) return fail(reply, 400, DEVICE_LIMIT_PROBLEM);
      if (device !== undefined && devices !== undefined)
        return fail(reply, 400, 'give device or devices, not both');
      const actions = Object.fromEntries(st.actions);
      if (device !== undefined) {
        // Any identifier of a device finds its list, which is kept under the first.
        const n = ['imei', 'iccid', 'mdn', 'msisdn', 'meid', 'esn', 'imsi']
          .map((k) => st.devices.find(k, device))
          .find((x) => x >= 0);
        const key = n !== undefined ? st.devices.primaryId(n) : device;
        return { actions, devices: { [key]: st.mutations.get(key) ?? [] } };
      }
      if (limit === Infinity) return { actions, devices: Object.fromEntries(st.mutations) };
      // The first `devices` lists: a test that wants the counts alone asks none of a large request's megabytes.
      const some: Record<string, unknown> = {};
      let left = limit;
      for (const [key, list] of st.mutations) {
        if (left-- <= 0) break;
        some[key] = list;
      }
      return { actions, devices: some };
    },
  );

  app.get('/_emulator/callbacks', { preValidation: takesOnly() }, async () => ({
    stats: core.callbacks.stats,
    deliveries: core.callbacks.deliveries(),
  }));

  app.get('/_emulator/notifications', { preValidation: takesOnly() }, async () => core.state.notifications);

  app.get<{ Querystring: Params }>(
    '/_emulator/requests',
    { preValidation: takesOnly('requestId', 'account', 'action', 'limit') },
    async (req, reply) => {
      const q = req.query;
      if (q.limit !== undefined && !/^\d+$/.test(q.limit))
        return fail(reply, 400, 'limit must be an integer from 0 up');
      catchUp(core, false);
      const st = core.state;
      return {
        requests: st.requests.records(st.devices, {
          ...(q.requestId !== undefined ? { requestId: q.requestId } : {}),
          ...(q.account !== undefined ? { accountName: q.account } : {}),
          ...(q.action !== undefined ? { action: q.action } : {}),
          ...(q.limit !== undefined ? { limit: Number(q.limit) } : {}),
        }),
      };
    },
  );
}
