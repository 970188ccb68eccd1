/**
 * A device's `attempts` in the ledger (runs show --devices --json, the CSV) are the sends made for it in its step,
 * up to the one that settled it, as the emulator counted the calls: each time the step's `retry:` sent its request
 * again, and each pass of `devices.retry`. Before, a refusal the step's `retry:` does not select (a 400, sent once)
 * recorded the step's `retry.maxAttempts` (3) for its devices, and a device accepted on the step's second send (its
 * first answer lost) recorded 1, the number of its `devices.retry` pass. The built binary in a child process,
 * against a standalone emulator over loopback, on a state file of its own (dist/ must be built; `npm test` builds
 * it).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { DeviceResult, RunSummary } from '../../src/store/store.js';
import { emulatorEnv, fleetbook } from '../helpers/cli.js';
import { suspendYaml } from '../runner/helpers.js';
import { activeAndPending, retriedSuspendYaml } from '../runner/retried-suspend.js';
import { tempDir } from '../helpers/temp.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** No device of the seeded world has this IMEI: the service answers 400 INVALID_PARAMETER. */
const UNKNOWN_DEVICE = '999999999999999';

const playbook = (name: string, on: string) =>
  suspendYaml(
    name,
    '0000123456-00001',
    [UNKNOWN_DEVICE],
    `retry: { on: [${on}], maxAttempts: 3, delay: 10ms }`,
  );

describe('the ledger: the attempts of a device-state request (child process)', function () {
  this.timeout(90_000);
  let emu: Emulator;
  let tmp: string;
  let env: Record<string, string>;

  before(async () => {
    emu = await startEmulator({ port: 0, timeScale: 0 });
    tmp = tempDir('fleetbook-ledger-attempts-');
    env = { ...emulatorEnv(emu), FLEETBOOK_STATE: join(tmp, 'state.db') };
  });
  after(async () => {
    await emu?.close();
  });

  const suspendCalls = async () => {
    const calls = (await (await fetch(`${emu.url}/_emulator/calls`)).json()) as {
      actions: Record<string, number>;
    };
    return calls.actions['devices.suspend'] ?? 0;
  };

  /** Runs the playbook; the emulator's suspend calls, the step's attempts and the device's ledger entry. */
  const runOnce = async (name: string, on: string) => {
    const file = join(tmp, `${name}.yaml`);
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

  it("each device's sends: the step's retry of a lost answer, then a devices.retry pass", async () => {
    const { account, active, pending } = await activeAndPending(emu, 1);
    const file = join(tmp, 'retried.yaml');
    await writeFile(
      file,
      retriedSuspendYaml(account, [active, ...pending], { confirm: '5s', pollInterval: '100ms', passes: 2 }),
    );
    // The first suspend's answer is lost after the service took it, and its carrier waits for the test's clock:
    // the step watches the devices' state for its confirmation time, then sends the request again.
    emu.setFaults({ processingSeconds: 30, resetNext: { 'devices.suspend': 1 } });
    const before = await suspendCalls();
    const running = fleetbook(['run', file, '--json'], env, [], undefined, 60_000);
    const deadline = Date.now() + 30_000;
    while ((await suspendCalls()) - before < 2) {
      if (Date.now() > deadline) throw new Error('the step did not send its request again');
      await sleep(50);
    }
    // The carrier acts now, and at once from here on.
    emu.setFaults({ processingSeconds: 0 });
    emu.advance(60);
    const r = await running;
    const runId = (JSON.parse(r.stdout) as RunSummary).runId;
    const shown = await fleetbook(['runs', 'show', runId, '--devices', '--json'], env);
    expect(shown.code, shown.stderr).to.equal(0);
    const s = JSON.parse(shown.stdout) as RunSummary & { deviceResults: DeviceResult[] };
    const results = Object.fromEntries(
      s.deviceResults.map((d) => [d.deviceId, [d.outcome, d.errorType, d.attempts]]),
    );
    // The active device: sent twice, accepted the second time. The pending one: twice, then once more by the
    // devices.retry pass, which the service refused again.
    expect({ sent: (await suspendCalls()) - before, results }).to.deep.equal({
      sent: 3,
      results: {
        [active]: ['succeeded', undefined, 2],
        [pending[0]!]: ['failed', 'STATE NOT CHANGED', 3],
      },
    });
  });
});
