/**
 * A step inside a forEach, read after the loop, reads as what it did over all the iterations. Before, the loop
 * set each of its inner steps to `{ status: succeeded, items: [] }` once it ended: a listing that failed in one
 * iteration (continued past) read `succeeded` with 0 items, a locate whose devices failed in some iterations
 * read `succeeded` with no per-device results, a step every iteration skipped read `succeeded`.
 *
 * Now its `status` is `failed` when an iteration's was (its `error` says in how many), `skipped` when every
 * iteration skipped it (with the reason), else `succeeded`; `devices` are its totals; a device action's `items`
 * are its per-device results over every iteration, from the ledger (a resumed run too); the items of a listing
 * (each iteration found its own), or of a step of a forEach inside another, cannot be read, and saying so. A
 * loop a limit ended reads so from `finally`, the devices the limit kept back counted.
 * `validate` refuses those reads written out (test/playbook/after-loop.test.ts): here they name the step at run
 * time (`steps[vars.which]`), which it cannot check, to show what the run then says.
 */
import { expect } from 'chai';
import { runPlaybook } from '../../src/runner/runner.js';
import type { RunOptions } from '../../src/runner/types.js';
import {
  accountDevices,
  calls,
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

/** An account the emulator does not have: its device listing is refused (HTTP 400). */
const NO_SUCH_ACCOUNT = '9999999999-99999';

describe('runner: an inner step read after its forEach', function () {
  this.timeout(30_000);
  const t = onEmulator({ accounts: 2, devicesPerAccount: 20 });
  afterEach(async () => setFaults(t.emu, {}));

  const run = (yaml: string, o: Partial<RunOptions> = {}) => runLogged(t, yaml, o);

  it('a listing that failed in one iteration: failed, and its items are not known after the loop', async () => {
    const [a, b] = t.emu.defaults.accounts as [string, string];
    const { s, lines } = await run(`version: 1
name: usage-by-account
on: { manual: true }
vars: { listing: usage }
steps:
  - id: each
    forEach:
      items: ["${a}", "${NO_SUCH_ACCOUNT}", "${b}"]
      steps:
        - id: usage
          uses: devices.list
          with: { accountName: "\${{ item }}" }
          onError: continue
  - id: status
    uses: log
    with: { message: "usage \${{ steps.usage.status }}: \${{ steps.usage.error }}" }
  - id: count
    uses: log
    with: { message: "\${{ size(steps[vars.listing].items) }} listed" }
    onError: continue
`);
    expect(s.status, s.error).to.equal('succeeded');
    const status = unstepped(lines).find((m) => m.startsWith('usage '));
    expect(status).to.match(/^usage failed: failed in 1 of 3 iterations \(iteration 1: devices\.list: .+\)$/);
    expect(
      unstepped(lines).filter((m) => m.endsWith('listed')),
      'no count of devices not known',
    ).to.deep.equal([]);
    expect(stepOf(s, 'count').status).to.equal('failed');
    expect(stepOf(s, 'count').error).to.match(
      /^`steps\.usage\.items` cannot be read after forEach `each`: each of its iterations found its own/,
    );
  });

  /** Lists the account, then locates its devices 5 at a time, each batch failing on a failed device. */
  const LOCATE_IN_BATCHES = (name: string, between = '') => `version: 1
name: ${name}
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}" }
  - id: batches
    forEach:
      items: "\${{ steps.devices.items }}"
      batchSize: 5
      steps:
        - id: locate
          uses: location.locate
          with: { accountName: "\${{ inputs.account }}", deviceList: "\${{ item }}" }
          devices: { toleratedFailurePercent: 0 }
          onError: continue${between}
  - id: say
    uses: log
    with:
      message: "\${{ steps.locate.status }}: \${{ size(steps.locate.items) }} results, \${{ size(steps.locate.items.filter(d, d.outcome == 'failed')) }} failed of \${{ steps.locate.devices.failed }}"
`;

  it("a device action: failed when an iteration's was, its items every device's result, from the ledger", async () => {
    await setFaults(t.emu, { deviceErrors: { 'ABSENT SUBSCRIBER': 0.5 } });
    const { s, lines } = await run(LOCATE_IN_BATCHES('locate-batches'), { inputs: { account: t.account } });
    expect(s.status, s.error).to.equal('succeeded');
    const locate = stepOf(s, 'locate');
    expect(locate.status).to.equal('failed');
    expect(locate.devices.total).to.equal(20);
    expect(locate.devices.failed).to.be.within(1, 19);
    const f = locate.devices.failed;
    expect(unstepped(lines)).to.include(`failed: 20 results, ${f} failed of ${f}`);
  });

  it('a step every iteration skipped: skipped, with the reason', async () => {
    const { s, lines } = await run(`version: 1
name: skipped-inside
on: { manual: true }
steps:
  - id: each
    forEach:
      items: [1, 2]
      steps:
        - id: note
          uses: log
          if: \${{ item > 5 }}
          with: { message: "big" }
  - id: say
    uses: log
    with: { message: "note \${{ steps.note.status }} (\${{ steps.note.reason }})" }
`);
    expect(s.status, s.error).to.equal('succeeded');
    expect(unstepped(lines)).to.include('note skipped (`if` was false)');
  });

  it('a device action in a forEach inside another: its items are not known after the inner loop', async () => {
    const { s } = await run(
      `version: 1
name: nested
on: { manual: true }
vars: { action: locate }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}", maxNumberOfDevices: 4 }
  - id: rounds
    forEach:
      items: [1]
      steps:
        - id: batches
          forEach:
            items: "\${{ steps.devices.items }}"
            batchSize: 2
            steps:
              - id: locate
                uses: location.locate
                with: { accountName: "\${{ inputs.account }}", deviceList: "\${{ item }}" }
        - id: count
          uses: log
          with: { message: "\${{ size(steps[vars.action].items) }} located" }
          onError: continue
`,
      { inputs: { account: t.account } },
    );
    expect(s.status, s.error).to.equal('succeeded');
    expect(stepOf(s, 'count').status).to.equal('failed');
    expect(stepOf(s, 'count').error).to.match(
      /^`steps\.locate\.items` cannot be read after forEach `batches`, which runs inside forEach `rounds`: .*after `rounds`/,
    );
  });

  it('a loop a limit ended: `finally` reads what its steps did, the devices the limit kept back too', async () => {
    const active = (await accountDevices(t.emu, t.account)).filter((d) => d.state === 'active').map(imei);
    const batch = (ids: string[]) => `[${ids.map((id) => `{ id: "${id}", kind: imei }`).join(', ')}]`;
    const { s, lines } = await run(`version: 1
name: limited-loop
on: { manual: true }
steps:
  - id: batches
    forEach:
      items: [${batch(active.slice(0, 2))}, ${batch(active.slice(2, 4))}]
      steps:
        - id: suspend
          uses: devices.suspend
          with: { accountName: "${t.account}", devices: "\${{ item }}" }
          limits: { maxDevices: 2 }
finally:
  - id: say
    uses: log
    with: { message: "suspend \${{ steps.suspend.status }}: \${{ steps.suspend.devices.succeeded }} succeeded, \${{ steps.suspend.devices.skipped }} skipped" }
`);
    expect(s.status).to.equal('failed');
    expect(stepOf(s, 'suspend').devices).to.include({ succeeded: 2, skipped: 2 });
    expect(unstepped(lines)).to.include('suspend failed: 2 succeeded, 2 skipped');
  });

  it('resumed after a crash: the restored iterations count, and the items come from the ledger', async () => {
    await setFaults(t.emu, { deviceErrors: { 'ABSENT SUBSCRIBER': 0.5 } });
    const T0 = Date.UTC(2026, 10, 29, 2, 0, 0);
    const stopped = stoppedClock(T0);
    const later = skippingClock(T0 + 60_000);
    const pb = playbook(LOCATE_IN_BATCHES('locate-resumed', '\n  - id: hold\n    wait: 1h'));
    const store = memoryStore();
    const o = { client: t.client, store, runId: 'r-after-loop', inputs: { account: t.account } };
    try {
      await interruptedRun(
        pb,
        { ...o, clock: stopped },
        async () =>
          ((await store.loadSteps(o.runId)).get('hold') as { status?: string } | undefined)?.status ===
          'waiting',
      );
      // The loop's iterations were done before the stop: the resumed run restores them, and locates nothing again.
      const located = (await calls(t.emu)).actions['location.locate'] ?? 0;
      expect(located, 'locate calls before the stop').to.be.greaterThan(0);
      const logger = captureLogger();
      const s = await runPlaybook(pb, { ...o, clock: later, logger });
      expect((await calls(t.emu)).actions['location.locate'] ?? 0, 'locate calls after').to.equal(located);
      expect(s.status, s.error).to.equal('succeeded');
      const locate = stepOf(s, 'locate');
      expect(locate.status).to.equal('failed');
      expect(locate.devices.total).to.equal(20);
      const f = locate.devices.failed;
      expect(f).to.be.within(1, 19);
      expect(unstepped(logger.lines)).to.include(`failed: 20 results, ${f} failed of ${f}`);
    } finally {
      await store.close();
    }
  });
});
