/**
 * One test case: its own embedded emulator (in-process, on loopback, with the case's world and faults), its own
 * store in memory, reports directory and webhook receivers; the run the daemon (an event) or `fleetbook run`
 * (inputs) would start; then the case's expectations against what the run did.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineSettings } from '../actions/settings.js';
import { createClient } from '../api/client.js';
import { loadConfig } from '../config.js';
import { connect, type Target } from '../connect.js';
import { localRun } from '../daemon/local-event.js';
import { silentLogger } from '../log.js';
import { parseDuration } from '../playbook/duration.js';
import type { Playbook } from '../playbook/schema.js';
import { startRun } from '../runner/factory.js';
import { InProcessDeviceLocks } from '../runner/locks.js';
import { SqliteStore } from '../store/sqlite.js';
import type { RunSummary } from '../store/store.js';
import { csvObjects } from '../util/csv.js';
import { compare, type Observation } from './expect.js';
import type { TestFile } from './load.js';
import { emulatorFaults } from './world.js';

type Json = Record<string, unknown>;

/** How long a case's run may take unless it says otherwise. */
export const DEFAULT_CASE_TIMEOUT = '60s';

/** Each failed expectation of case `index` of `tf`, as `file:line: message`; empty when it passed. */
export async function runCase(tf: TestFile, index: number, pb: Playbook): Promise<string[]> {
  const c = tf.cases[index] as Json;
  const receivers = await startReceivers((c.webhooks as Record<string, Json> | undefined) ?? {});
  const reportsDir = await mkdtemp(join(tmpdir(), 'fleetbook-test-'));
  const store = new SqliteStore(':memory:');
  let target: Target | undefined;
  try {
    // No environment: a case runs the same on every machine and in CI.
    target = await connect(loadConfig({}), silentLogger, {
      ...tf.world,
      ...(c.world as Json | undefined),
      faults: emulatorFaults({ ...tf.faults, ...(c.faults as Json | undefined) }),
    });
    const client = createClient({ ...target.options, logger: silentLogger });
    const start = localRun(pb, 'event' in c ? { event: c.event } : { inputs: (c.inputs as Json) ?? {} });
    let summary: RunSummary | undefined;
    try {
      if (!('refused' in start))
        summary = await startRun(
          {
            client,
            store,
            logger: silentLogger,
            engine: engineSettings({ reportsDir, webhookAllow: ['127.0.0.1'] }),
            owner: 'fleetbook-test',
            locks: new InProcessDeviceLocks(),
            secrets: { ...(c.secrets as Record<string, string> | undefined), ...receivers.urls },
            env: {},
            ...(target.pollIntervalMs ? { pollIntervalMs: target.pollIntervalMs } : {}),
          },
          pb,
          {
            ...start,
            dryRun: c.dryRun === true,
            signal: AbortSignal.timeout(parseDuration(String(c.timeout ?? DEFAULT_CASE_TIMEOUT)) ?? 60_000),
          },
        );
    } finally {
      await client.close();
    }
    const emulator = (target.emulator as NonNullable<Target['emulator']>).url;
    const observation = observe(emulator, store, summary, reportsDir, receivers.bodies);
    if ('refused' in start) observation.refused = start.refused;
    return await compare(c.expect as Json, observation, tf.where, ['cases', index, 'expect']);
  } finally {
    await target?.close();
    await store.close();
    await receivers.close();
    await rm(reportsDir, { recursive: true, force: true });
  }
}

function observe(
  emulator: string,
  store: SqliteStore,
  summary: RunSummary | undefined,
  reportsDir: string,
  bodies: Map<string, unknown[]>,
): Observation {
  const control = async (path: string) =>
    (await (await fetch(`${emulator}/_emulator${path}`)).json()) as Json;
  const runId = summary?.runId ?? '';
  return {
    ...(summary ? { summary } : {}),
    calls: async () => (await control('/calls')).actions as Record<string, number>,
    async deviceCalls(id) {
      const devices = (await control(`/calls?device=${encodeURIComponent(id)}`)).devices as Record<
        string,
        { action: string }[]
      >;
      const out: Record<string, number> = {};
      for (const m of Object.values(devices).flat()) out[m.action] = (out[m.action] ?? 0) + 1;
      return out;
    },
    async deviceState(id) {
      const accounts = (await control('/accounts')).accounts as {
        devices: { deviceIds: { id: string }[]; state: string }[];
      }[];
      const device = accounts.flatMap((a) => a.devices).find((d) => d.deviceIds.some((x) => x.id === id));
      return device?.state;
    },
    outcomes: async (step) =>
      new Map((await store.deviceResults(runId, step)).map((r) => [r.deviceId, r.outcome])),
    async report(step) {
      const state = (await store.loadSteps(runId)).get(step) as {
        output?: { file?: string; format?: string };
      };
      const file = state?.output?.file;
      if (!file) return `step ${step} wrote no report`;
      const text = await readFile(file, 'utf8');
      if (state.output?.format === 'json') {
        const rows = JSON.parse(text) as Json[];
        return { header: rows[0] ? Object.keys(rows[0]) : [], rows };
      }
      return csvObjects(text);
    },
    webhook: (name) => bodies.get(name) ?? [],
  };
}

/** A webhook receiver on loopback per name, answering its `status`, keeping the JSON bodies it gets. */
async function startReceivers(specs: Record<string, Json>): Promise<{
  urls: Record<string, string>;
  bodies: Map<string, unknown[]>;
  close(): Promise<void>;
}> {
  const urls: Record<string, string> = {};
  const bodies = new Map<string, unknown[]>();
  const servers: Server[] = [];
  for (const [name, spec] of Object.entries(specs)) {
    const got: unknown[] = [];
    bodies.set(name, got);
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          got.push(JSON.parse(text));
        } catch {
          got.push(text);
        }
        res.writeHead(typeof spec.status === 'number' ? spec.status : 200).end();
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    urls[name] = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${encodeURIComponent(name)}`;
  }
  return {
    urls,
    bodies,
    close: async () => {
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    },
  };
}
