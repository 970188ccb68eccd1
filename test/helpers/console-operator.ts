/**
 * What the console's operator suites share (test/console/console-*.test.ts): a `consoleSuite` on the playbooks of
 * test/fixtures/console, an emulator whose account has enough devices for a report to end with several error
 * types, and the console's JSON API as a script calls it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { until } from './browser.js';
import { BIN, emulatorEnv } from './cli.js';
import { consoleSuite, startConsoleRun, type ConsoleSuite } from './console-suite.js';

export const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'console');
/** The console token: 32 characters. */
export const TOKEN = 'console-browser-token-0123456789';
export const CALLBACK_PLAYBOOK = 'usage-locate';
export const REPORT_PLAYBOOK = 'location-report';
export const LONG_PLAYBOOK = 'long-wait';
export const REQUEST_ID = 'console-usage-1';
/** Devices of the emulator's one account: enough for the report to end with several error types. */
const DEVICES = 200;
/** Location errors the emulator adds to the seed's own (a cache miss, a device that is not IoT). */
const DEVICE_ERRORS = { 'ABSENT SUBSCRIBER': 0.05, 'SVC CONSENT CHECK FAILED': 0.04 };

export type Json = Record<string, unknown>;

interface DeviceCounts {
  total: number;
  succeeded: number;
  failed: number;
  skipped: number;
  byError: Record<string, number>;
}

export interface RunRow {
  id: string;
  playbook: string;
  status: string;
  trigger: { type: string; requestId?: string };
  devices?: DeviceCounts;
  inputs?: Json;
  error?: string;
  steps?: { id: string; status: string; error?: string }[];
}

export interface DeviceRow {
  step: string;
  deviceId: string;
  kind: string;
  outcome: string;
  errorType?: string;
  errorClass?: string;
  /** What the step returned for the device (a location). */
  data?: Json;
}

export interface OperatorSuite {
  t: ConsoleSuite;
  /** The console's JSON API, as a script calls it: with the token as a bearer. */
  apiGet<T>(path: string): Promise<T>;
  runDetail(id: string): Promise<{
    run: RunRow & { version?: string; cancelRequested?: string };
    cancellable: boolean;
    cancelBy?: { holder?: string; serve?: string; text?: string };
  }>;
  /** A `fleetbook run` of the long playbook on the daemon's state file, with its own lease: a run it holds. */
  runElsewhere(lease: string): ReturnType<typeof spawn>;
  /** A report run started by the JSON API, as a script starts it, once it has succeeded: its id. */
  reportRun(): Promise<string>;
}

/**
 * A describe block's operator suite; `name` names its daemon, `playbooks` the folder it loads (a copy of
 * FIXTURES, or FIXTURES itself).
 */
export function operatorSuite(name: string, playbooks = FIXTURES): OperatorSuite {
  const t = consoleSuite({
    name,
    playbooks,
    token: TOKEN,
    env: { FLEETBOOK_LOG_LEVEL: 'info' },
    emulator: { devicesPerAccount: DEVICES, faults: { deviceErrors: DEVICE_ERRORS } },
  });

  async function apiGet<T>(path: string): Promise<T> {
    const res = await fetch(`${t.daemon.url}/console/api${path}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const text = await res.text();
    expect(res.status, `GET /console/api${path}: ${text.slice(0, 500)}`).to.equal(200);
    return JSON.parse(text) as T;
  }

  const runDetail: OperatorSuite['runDetail'] = (id) => apiGet(`/runs/${encodeURIComponent(id)}`);

  const runElsewhere = (lease: string) =>
    spawn(process.execPath, [BIN, 'run', join(playbooks, `${LONG_PLAYBOOK}.yaml`)], {
      env: {
        PATH: process.env.PATH ?? '',
        ...emulatorEnv(t.emu),
        FLEETBOOK_STATE: t.state,
        FLEETBOOK_LEASE: lease,
      },
      stdio: 'ignore',
    });

  async function reportRun(): Promise<string> {
    const runId = await startConsoleRun(t.daemon, REPORT_PLAYBOOK, TOKEN, { account: t.account });
    await until(
      `run ${runId} succeeded`,
      async (seen) => {
        const { status } = (await runDetail(runId)).run;
        seen(status);
        return status === 'succeeded' ? true : undefined;
      },
      60_000,
      500,
    );
    return runId;
  }

  return { t, apiGet, runDetail, runElsewhere, reportRun };
}
