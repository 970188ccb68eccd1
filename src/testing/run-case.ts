/**
 * One test case: its own embedded emulator (in-process, on loopback, with the case's world and faults), its own
 * store in memory, reports directory and webhook receivers; its earlier runs (`before`), if any; the run the
 * daemon (an event, a schedule's fire) or `fleetbook run` (inputs) would start; then the case's expectations
 * against what the run did.
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
import type { Playbook, Step } from '../playbook/schema.js';
import { eachStep } from '../playbook/step-tree.js';
import { savePlaybookVersions } from '../daemon/versions.js';
import { startRun, type RunServices } from '../runner/factory.js';
import { OUTPUT_LIMIT } from '../runner/runner.js';
import { CASE_WORDING } from '../runner/inputs.js';
import { InProcessDeviceLocks } from '../runner/locks.js';
import { everyStep } from '../store/run-views.js';
import { SqliteStore } from '../store/sqlite.js';
import type { RunSummary } from '../store/store.js';
import { csvObjects } from '../util/csv.js';
import { compare, type Observation } from './expect.js';
import type { TestFile } from './load.js';
import { PlannedItems, stepItems } from './items.js';
import { CaseClock, firedRun, firesOf, type CaseRun, type Fire } from './schedule.js';
import { emulatorFaults } from './world.js';

type Json = Record<string, unknown>;

/** How long a case's run may take unless it says otherwise. */
export const DEFAULT_CASE_TIMEOUT = '60s';

/** A run of a case's `before`: the playbook, loaded, and its file as the test file names it. */
export interface EarlierRun {
  file: string;
  playbook: Playbook;
}

/** What one run of a case did: its summary, or why it did not start. */
type Ran = { summary?: RunSummary; refused?: string };

/**
 * Each failed expectation of case `index` of `tf`, as `file:line: message`; empty when it passed. Its earlier
 * runs (`earlier`, the playbooks of its `before`) are made first, in order, on the same emulator and store; the
 * first that does not succeed fails the case.
 */
export async function runCase(
  tf: TestFile,
  index: number,
  pb: Playbook,
  earlier: EarlierRun[] = [],
): Promise<string[]> {
  const c = tf.cases[index] as Json;
  // The scheduled runs' times: the case's clock, and the emulator's, start at the first.
  const fires = firesOf(caseRuns(tf, index, pb, earlier), Date.now());
  const start = fires.find((f) => f !== undefined)?.at;
  const clock = new CaseClock(start);
  const receivers = await startReceivers((c.webhooks as Record<string, Json> | undefined) ?? {});
  const reportsDir = await mkdtemp(join(tmpdir(), 'fleetbook-test-'));
  const store = new SqliteStore(':memory:');
  const faults = { ...tf.faults, ...(c.faults as Json | undefined) };
  let target: Target | undefined;
  try {
    // No environment: a case runs the same on every machine and in CI.
    target = await connect(loadConfig({}), silentLogger, {
      ...tf.world,
      ...(c.world as Json | undefined),
      faults: emulatorFaults(faults),
      ...(start !== undefined ? { startTime: start } : {}),
    });
    const emulator = target.emulator as NonNullable<Target['emulator']>;
    const client = createClient({ ...target.options, logger: silentLogger });
    const { pollIntervalMs } = target;
    const services: RunServices = {
      client,
      store,
      logger: silentLogger,
      engine: engineSettings({ reportsDir, webhookAllow: ['127.0.0.1'], confine: receivers.confine }),
      owner: OWNER,
      locks: new InProcessDeviceLocks(),
      secrets: { ...(c.secrets as Record<string, string> | undefined), ...receivers.urls },
      env: {},
      clock,
      ...(pollIntervalMs ? { pollIntervalMs } : {}),
    };
    // The devices the case's dry run would have acted on, step by step: what its `items` are.
    const planned = new PlannedItems();
    const run = async (playbook: Playbook, start: Json, dryRun: boolean, fire?: Fire): Promise<Ran> => {
      const signal = AbortSignal.timeout(parseDuration(String(c.timeout ?? DEFAULT_CASE_TIMEOUT)) ?? 60_000);
      const dry = dryRun ? { dryRun, onPlanned: planned.add } : {};
      if (fire) {
        const stored = firedRun(fire, playbook, clock, OWNER);
        // What the fire's run would do: its trigger and time, none of its mutating calls (as `fleetbook run
        // --dry-run`, which cannot start a schedule-only playbook, would show it).
        if (dryRun)
          return {
            summary: await startRun(services, playbook, { trigger: stored.trigger as Json, ...dry, signal }),
          };
        // Stored queued, then executed, as the daemon's scheduler and pool do.
        await savePlaybookVersions(store, [playbook]);
        store.createRun(stored);
        return { summary: await startRun(services, playbook, { stored, signal }) };
      }
      const local = localRun(
        playbook,
        'event' in start ? { event: start.event } : { inputs: (start.inputs as Json) ?? {} },
        CASE_WORDING,
      );
      if ('refused' in local) return { refused: refusal(playbook, start) ?? local.refused };
      return { summary: await startRun(services, playbook, { ...local, ...dry, signal }) };
    };
    let ran: Ran;
    let before: Baseline | undefined;
    try {
      const entries = (c.before as Json[] | undefined) ?? [];
      for (const [j, e] of entries.entries()) {
        const { file, playbook } = earlier[j] as EarlierRun;
        emulator.setFaults(emulatorFaults({ ...faults, ...(e.faults as Json | undefined) }));
        const why = notSucceeded(await run(playbook, e, false, fires[j]));
        if (why) return [`${tf.where(['cases', index, 'before', j])}: earlier run ${j + 1} (${file}) ${why}`];
      }
      if (entries.length) {
        emulator.setFaults(emulatorFaults(faults));
        before = await baseline(emulator.url, receivers.bodies);
      }
      ran = await run(pb, c, c.dryRun === true, fires[entries.length]);
    } finally {
      await client.close();
    }
    // Every step of the playbook, those the run never reached `unreached`, as `fleetbook run` shows them.
    const summary = ran.summary && { ...ran.summary, steps: everyStep(ran.summary.steps, pb) };
    const observation = observe(emulator.url, store, summary, reportsDir, receivers.bodies, before ?? NONE, {
      pb,
      planned,
    });
    if (ran.refused !== undefined) observation.refused = ran.refused;
    return await compare(c.expect as Json, observation, tf.where, ['cases', index, 'expect']);
  } finally {
    await target?.close();
    await store.close();
    await receivers.close();
    await rm(reportsDir, { recursive: true, force: true });
  }
}

/** The owner of a case's runs. */
const OWNER = 'fleetbook-test';

/** The runs of case `index`, in order: its earlier runs (`earlier`, their playbooks loaded), then its own. */
export function caseRuns(tf: TestFile, index: number, pb: Playbook, earlier: EarlierRun[]): CaseRun[] {
  const c = tf.cases[index] as Json;
  const before = (c.before as Json[] | undefined) ?? [];
  return [
    ...before.map((e, j) => ({
      path: ['cases', index, 'before', j],
      start: e,
      playbook: (earlier[j] as EarlierRun).playbook,
    })),
    { path: ['cases', index], start: c, playbook: pb },
  ];
}

/**
 * Why a scheduled playbook without `on.manual` starts no run given nothing, in a test's words: the schedule's
 * run is made with `schedule`, and `manual: true` would let anyone start it by hand in production.
 */
function refusal(pb: Playbook, start: Json): string | undefined {
  if ('event' in start || 'inputs' in start || pb.on.manual || pb.on.schedule === undefined) return undefined;
  return `playbook ${pb.name} does not declare on.manual: give \`schedule: true\` to start the run its schedule starts, or \`schedule: { at: TIME }\` for the fire at that time`;
}

/** Why an earlier run fails its case (it did not start, failed, was cancelled), or undefined when it succeeded. */
function notSucceeded({ summary, refused }: Ran): string | undefined {
  if (refused !== undefined) return `did not start: ${refused}`;
  if (summary?.status === 'succeeded') return undefined;
  const status = summary?.status === 'cancelled' ? 'was cancelled' : (summary?.status ?? 'did not end');
  return summary?.error ? `${status}: ${summary.error}` : status;
}

/**
 * What the emulator and the receivers had got before the case's own run, when earlier runs came first: the
 * case's `calls`, `deviceCalls` and `webhooks` are those of its own run.
 */
interface Baseline {
  actions: Record<string, number>;
  devices: Record<string, number>;
  bodies: Record<string, number>;
}

/** Nothing before the case's own run: it has no earlier runs. */
const NONE: Baseline = { actions: {}, devices: {}, bodies: {} };

async function baseline(emulator: string, bodies: Map<string, unknown[]>): Promise<Baseline> {
  const calls = (await (await fetch(`${emulator}/_emulator/calls`)).json()) as {
    actions: Record<string, number>;
    devices: Record<string, unknown[]>;
  };
  return {
    actions: calls.actions,
    devices: Object.fromEntries(Object.entries(calls.devices).map(([k, v]) => [k, v.length])),
    bodies: Object.fromEntries([...bodies].map(([k, v]) => [k, v.length])),
  };
}

function observe(
  emulator: string,
  store: SqliteStore,
  summary: RunSummary | undefined,
  reportsDir: string,
  bodies: Map<string, unknown[]>,
  before: Baseline,
  run: { pb: Playbook; planned: PlannedItems },
): Observation {
  const looped = loopedSteps(run.pb);
  const control = async (path: string) =>
    (await (await fetch(`${emulator}/_emulator${path}`)).json()) as Json;
  const runId = summary?.runId ?? '';
  return {
    ...(summary ? { summary } : {}),
    async calls() {
      const actions = (await control('/calls?devices=0')).actions as Record<string, number>;
      return Object.fromEntries(
        Object.entries(actions).map(([action, n]) => [action, n - (before.actions[action] ?? 0)]),
      );
    },
    async deviceCalls(id) {
      const devices = (await control(`/calls?device=${encodeURIComponent(id)}`)).devices as Record<
        string,
        { action: string }[]
      >;
      const out: Record<string, number> = {};
      for (const [key, list] of Object.entries(devices))
        for (const m of list.slice(before.devices[key] ?? 0)) out[m.action] = (out[m.action] ?? 0) + 1;
      return out;
    },
    async deviceState(id) {
      const accounts = (await control('/accounts')).accounts as {
        devices: { deviceIds: { id: string }[]; state: string }[];
      }[];
      const device = accounts.flatMap((a) => a.devices).find((d) => d.deviceIds.some((x) => x.id === id));
      return device?.state;
    },
    items: (step) => stepItems(store, runId, step, run.planned),
    outcomes: async (step) =>
      new Map((await store.deviceResults(runId, step)).map((r) => [r.deviceId, r.outcome])),
    async output(step) {
      const states = (await store.loadSteps(runId)) as Map<string, { status?: string; output?: unknown }>;
      if (looped.has(step)) {
        // Each iteration's under its own key: `each[2]/usage`, `outer[0]/inner[1]/usage`.
        const key = new RegExp(`^(?:[A-Za-z_][A-Za-z0-9_]*\\[\\d+\\]/)+${step}$`);
        const at = (k: string) => [...k.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
        const byIndex = (a: number[], b: number[]) => {
          for (let i = 0; i < Math.min(a.length, b.length); i++)
            if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0);
          return a.length - b.length;
        };
        const outputs = [...states]
          .filter(([k, cp]) => key.test(k) && cp.status === 'succeeded')
          .sort(([a], [b]) => byIndex(at(a), at(b)))
          .map(([, cp]) => cp.output ?? null);
        return outputs.some(notKept) ? tooLarge(step) : { value: outputs, iterations: true };
      }
      const cp = states.get(step);
      if (!cp) {
        const status = summary?.steps.find((s) => s.id === step)?.status;
        // Skipped by its `if` (of a run written before such skips were marked), a step keeps no checkpoint: its
        // output is null, as the playbook reads it.
        if (status === 'skipped') return { value: null, iterations: false };
        return `step ${step} gave no output: ${status === 'unreached' ? 'the run never reached it' : `it is ${status ?? 'not in the run'}`}`;
      }
      return notKept(cp.output) ? tooLarge(step) : { value: cp.output ?? null, iterations: false };
    },
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
    webhook: (name) => (bodies.get(name) ?? []).slice(before.bodies[name] ?? 0),
  };
}

/** The steps inside a forEach, at any depth: each iteration gives its own output. */
function loopedSteps(pb: Playbook): Set<string> {
  const parent = new Map<string, Step | undefined>();
  for (const list of [pb.steps, pb.finally]) eachStep(list, (s, within) => parent.set(s.id, within));
  const looped = new Set<string>();
  for (const id of parent.keys())
    for (let p = parent.get(id); p; p = parent.get(p.id))
      if ('forEach' in p) {
        looped.add(id);
        break;
      }
  return looped;
}

/** An output larger than the run keeps (runner.ts boundedOutput): what stands in its place. */
const notKept = (output: unknown): boolean =>
  output !== null &&
  typeof output === 'object' &&
  (output as Json).truncated === true &&
  typeof (output as Json).largerThan === 'number';

const tooLarge = (step: string) =>
  `the output of step ${step} is larger than a run keeps (${OUTPUT_LIMIT} characters of JSON), and cannot be checked: check what a later step makes of it`;

/** A webhook receiver on loopback per name, answering its `status`, keeping the JSON bodies it gets. */
async function startReceivers(specs: Record<string, Json>): Promise<{
  urls: Record<string, string>;
  bodies: Map<string, unknown[]>;
  /** Why a webhook may not go to a URL: a case sends nothing off the machine, only to its receivers. */
  confine(url: URL): string | undefined;
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
  const origins = new Set(Object.values(urls).map((u) => new URL(u).origin));
  return {
    urls,
    bodies,
    confine: (url) =>
      origins.has(url.origin)
        ? undefined
        : `a playbook test sends webhooks only to its case's receivers (\`webhooks\`), not to ${url.origin}: give the URL as a secret (\`url: \${{ secrets.ONCALL }}\`) and the case a receiver of that name (\`webhooks: { ONCALL: {} }\`)`,
    close: async () => {
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    },
  };
}
