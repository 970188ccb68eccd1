/**
 * A device-state step whose request the service refused records, for each device, the attempts the step made:
 * the ledger (runs show --devices --json, the CSV) says how often the devices were sent, as the emulator counted
 * the calls. Before, a refusal the step's `retry:` does not select (a 400, sent once) recorded the step's
 * `retry.maxAttempts` (3) for its devices. The built binary in a child process, against a standalone emulator
 * over loopback, on a state file of its own (dist/ must be built; `npm test` builds it).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { DeviceResult, RunSummary } from '../../src/store/store.js';
import { emulatorEnv, fleetbook } from '../helpers/cli.js';
import { tempDir } from '../runner/helpers.js';

/** No device of the seeded world has this IMEI: the service answers 400 INVALID_PARAMETER. */
const UNKNOWN_DEVICE = '999999999999999';

const playbook = (name: string, on: string) => `version: 1
name: ${name}
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with:
      accountName: '0000123456-00001'
      devices: [{ id: '${UNKNOWN_DEVICE}', kind: imei }]
    retry: { on: [${on}], maxAttempts: 3, delay: 10ms }
`;

describe('the ledger: attempts of a device-state request the service refused (child process)', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let tmp: { dir: string; close(): Promise<void> };
  let env: Record<string, string>;

  before(async () => {
    emu = await startEmulator({ port: 0, timeScale: 0 });
    tmp = await tempDir();
    env = { ...emulatorEnv(emu), FLEETBOOK_STATE: join(tmp.dir, 'state.db') };
  });
  after(async () => {
    await emu?.close();
    await tmp?.close();
  });

  const suspendCalls = async () => {
    const calls = (await (await fetch(`${emu.url}/_emulator/calls`)).json()) as {
      actions: Record<string, number>;
    };
    return calls.actions['devices.suspend'] ?? 0;
  };

  /** Runs the playbook; the emulator's suspend calls, the step's attempts and the device's ledger entry. */
  const runOnce = async (name: string, on: string) => {
    const file = join(tmp.dir, `${name}.yaml`);
    await writeFile(file, playbook(name, on));
    const before = await suspendCalls();
    const r = await fleetbook(['run', file, '--json'], env);
    expect(r.code, r.stderr).to.equal(1);
    const runId = (JSON.parse(r.stdout) as RunSummary).runId;
    const shown = await fleetbook(['runs', 'show', runId, '--devices', '--json'], env);
    expect(shown.code, shown.stderr).to.equal(0);
    const s = JSON.parse(shown.stdout) as RunSummary & { deviceResults: DeviceResult[] };
    return {
      sent: (await suspendCalls()) - before,
      stepAttempts: s.steps.find((x) => x.id === 'suspend')?.attempts,
      results: s.deviceResults.map((d) => [d.deviceId, d.outcome, d.errorType, d.attempts]),
    };
  };

  it('a refusal not retried: one attempt, as the service saw one call', async () => {
    expect(await runOnce('refused-once', 'http.5xx')).to.deep.equal({
      sent: 1,
      stepAttempts: 1,
      results: [[UNKNOWN_DEVICE, 'failed', 'INVALID_PARAMETER', 1]],
    });
  });

  it('a refusal retried until the step gives up: each attempt counted', async () => {
    expect(await runOnce('refused-thrice', 'http.4xx')).to.deep.equal({
      sent: 3,
      stepAttempts: 3,
      results: [[UNKNOWN_DEVICE, 'failed', 'INVALID_PARAMETER', 3]],
    });
  });
});
