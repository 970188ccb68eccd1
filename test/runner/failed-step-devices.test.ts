/**
 * The devices of a device action that failed by an error (not by its tolerance) are what it recorded. Before,
 * `steps.<id>.devices` of such a step read zero counts (`0 of 0 unconfirmed`) while the run summary counted the
 * devices it had recorded in the ledger (a limit's `skipped` devices, a suspend's `unconfirmed` ones when its
 * timeout ended the confirmation); and its failed checkpoint kept no counts, so a resumed run's summary lost them
 * too. Now the step's devices, the summary and the checkpoint say the same, after a resume too.
 */
import { expect } from 'chai';
import { runPlaybook } from '../../src/runner/runner.js';
import type { RunOptions } from '../../src/runner/types.js';
import {
  accountDevices,
  captureLogger,
  imei,
  interruptedRun,
  memoryStore,
  onEmulator,
  playbook,
  setFaults,
  skippingClock,
  stoppedClock,
  runLogged,
  stepOf,
  unstepped,
} from './helpers.js';

describe('runner: the devices of a step that failed by an error', function () {
  this.timeout(30_000);
  const t = onEmulator({ accounts: 1, devicesPerAccount: 40 });
  let active: string[];

  before(async () => {
    active = (await accountDevices(t.emu, t.account)).filter((d) => d.state === 'active').map(imei);
    expect(active.length).to.be.greaterThan(6);
  });
  afterEach(async () => setFaults(t.emu, {}));

  const run = (yaml: string, o: Partial<RunOptions> = {}) => runLogged(t, yaml, o);
  const list = (ids: string[]) => `[${ids.map((id) => `{ id: "${id}", kind: imei }`).join(', ')}]`;

  it('a step a limit stopped: its skipped devices, as `finally` reads them and the summary counts them', async () => {
    const { s, lines } = await run(`version: 1
name: limited
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: "${t.account}", devices: ${list(active.slice(0, 3))} }
    limits: { maxDevices: 2 }
finally:
  - id: say
    uses: log
    with: { message: "\${{ steps.suspend.status }}: \${{ steps.suspend.devices.skipped }} of \${{ steps.suspend.devices.total }} skipped" }
`);
    expect(s.status).to.equal('failed');
    expect(stepOf(s, 'suspend').devices).to.include({ total: 3, skipped: 3 });
    expect(s.devices).to.include({ total: 3, skipped: 3 });
    expect(unstepped(lines)).to.include('failed: 3 of 3 skipped');
  });

  /** Suspends `ids` with a carrier that does not finish: the step's timeout ends it while it confirms. */
  const TIMED_OUT = (name: string, ids: string[], between = '') => `version: 1
name: ${name}
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: "${t.account}", devices: ${list(ids)} }
    timeout: 1s
    confirm: { timeout: 30m, pollInterval: 100ms }
    onError: continue${between}
  - id: say
    uses: log
    with: { message: "\${{ steps.suspend.status }}: \${{ steps.suspend.devices.unconfirmed }} of \${{ steps.suspend.devices.total }} unconfirmed" }
`;

  it('a device-state step that timed out while confirming: its unconfirmed devices, read by the next step', async () => {
    await setFaults(t.emu, { processingSeconds: 3600 });
    const { s, lines } = await run(TIMED_OUT('timed-out', active.slice(3, 6)));
    expect(s.status, s.error).to.equal('succeeded');
    expect(stepOf(s, 'suspend').status).to.equal('failed');
    expect(stepOf(s, 'suspend').devices).to.include({ total: 3, unconfirmed: 3 });
    expect(unstepped(lines)).to.include('failed: 3 of 3 unconfirmed');
  });

  it('resumed after a crash: the failed checkpoint keeps the counts, for the step and the summary', async () => {
    await setFaults(t.emu, { processingSeconds: 3600 });
    const T0 = Date.UTC(2026, 10, 29, 2, 0, 0);
    // The first execution's clock stands still: the confirmation's polls wait until the step's timeout.
    const stopped = stoppedClock(T0);
    const later = skippingClock(T0 + 60_000);
    const pb = playbook(TIMED_OUT('timed-out-resumed', active.slice(6, 9), '\n  - id: hold\n    wait: 1h'));
    const store = memoryStore();
    const o = { client: t.client, store, runId: 'r-failed-devices' };
    try {
      await interruptedRun(
        pb,
        { ...o, clock: stopped },
        async () =>
          ((await store.loadSteps(o.runId)).get('hold') as { status?: string } | undefined)?.status ===
          'waiting',
      );
      const failed = (await store.loadSteps(o.runId)).get('suspend') as { status: string; devices?: unknown };
      expect(failed.status).to.equal('failed');
      expect(failed.devices, 'the failed checkpoint').to.include({ total: 3, unconfirmed: 3 });
      const logger = captureLogger();
      const s = await runPlaybook(pb, { ...o, clock: later, logger });
      expect(s.status, s.error).to.equal('succeeded');
      expect(stepOf(s, 'suspend').devices).to.include({ total: 3, unconfirmed: 3 });
      expect(s.devices).to.include({ total: 3, unconfirmed: 3 });
      expect(unstepped(logger.lines)).to.include('failed: 3 of 3 unconfirmed');
    } finally {
      await store.close();
    }
  });
});
