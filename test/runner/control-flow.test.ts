/**
 * Control flow of the runner, against the emulator where a step calls the service: onError (rescue steps,
 * continue, fail), finally, step timeout (and retry on it), parallel, retry of engine actions, forEach (inner
 * steps seen after the loop, toleratedFailurePercent), set, fail, if, and typed inputs.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { engineSettings } from '../../src/actions/settings.js';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { coerceInputs } from '../../src/runner/inputs.js';
import { runPlaybook, type RunOptions } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import type { RunSummary } from '../../src/store/store.js';
import { until } from '../store/fixtures.js';
import {
  accountDevices,
  calls,
  captureLogger,
  clientFor,
  emulator,
  imei,
  memoryStore,
  playbook,
  setFaults,
  type LogLine,
} from './helpers.js';

const TYPED_YAML = `
version: 1
name: typed
on: { manual: true }
inputs:
  count: { type: integer, required: true }
  ratio: { type: number, default: 0.5 }
  dry: { type: boolean, default: false }
  ids: { type: array, default: [] }
  opts: { type: object, default: {} }
  code: { type: string, default: "007" }
  mode: { type: string, enum: [fast, slow], default: fast }
steps:
  - id: show
    uses: log
    with: { message: "\${{ inputs.count + 1 }} \${{ inputs.ratio * 2.0 }} \${{ inputs.dry }} \${{ size(inputs.ids) }} \${{ inputs.code }}" }
`;

/** A Luhn-valid IMEI that no device of the seeded world has. */
const UNKNOWN_IMEI = '490154203237518';

describe('runner: control flow', function () {
  this.timeout(20_000);
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let account: string;
  let lines: LogLine[];

  before(async () => {
    emu = await emulator({ devicesPerAccount: 50 });
    account = emu.defaults.accounts[0]!;
    client = clientFor(emu);
    // Log in once, so that no test's timing includes the token and the login.
    await client.callByName('devices.list', { accountName: account, maxNumberOfDevices: 1 });
    store = memoryStore();
  });
  after(async () => {
    await store.close();
    await client.close();
    await emu.close();
  });
  beforeEach(async () => {
    lines = [];
    await setFaults(emu, {});
  });

  function run(yaml: string, o: Partial<RunOptions> = {}): Promise<RunSummary> {
    return runPlaybook(playbook(yaml), { client, store, logger: captureLogger(lines), ...o });
  }
  const logged = () => lines.map((l) => l.message);
  const step = (s: RunSummary, id: string) => s.steps.find((x) => x.id === id);

  describe('onError', () => {
    it('runs rescue steps after a failed API call; they see its error, and the run succeeds', async () => {
      const s = await run(
        `
version: 1
name: rescue
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: \${{ inputs.account }}, devices: [{ id: "${UNKNOWN_IMEI}", kind: imei }] }
    onError:
      - id: note
        uses: log
        with: { message: "rescued: \${{ steps.suspend.error }}" }
      - id: mark
        set: { rescued: true }
  - id: after
    if: \${{ vars.rescued }}
    uses: log
    with: { message: after the rescue }
`,
        { inputs: { account } },
      );
      expect(s.status, s.error).to.equal('succeeded');
      expect(step(s, 'suspend')?.status).to.equal('failed');
      expect(step(s, 'suspend')?.error).to.match(/HTTP 400 INVALID_PARAMETER: Device not found/);
      expect(step(s, 'note')?.status).to.equal('succeeded');
      expect(step(s, 'after')?.status).to.equal('succeeded');
      expect(logged()).to.include(`rescued: ${step(s, 'suspend')?.error}`);
      expect(logged()).to.include('after the rescue');
      // The service refused the request: nothing was changed.
      expect((await calls(emu)).devices).to.deep.equal({});
    });

    it('continue: the failed step is recorded and the run goes on', async () => {
      const s = await run(`
version: 1
name: carry-on
on: { manual: true }
steps:
  - id: broken
    fail: not this time
    onError: continue
  - id: next
    uses: log
    with: { message: "broken was \${{ steps.broken.status }}" }
`);
      expect(s.status, s.error).to.equal('succeeded');
      expect(step(s, 'broken')).to.include({ status: 'failed', error: 'not this time' });
      expect(logged()).to.include('broken was failed');
    });

    it('fail (the default): the run fails with the step and its reason, and later steps do not run', async () => {
      const s = await run(`
version: 1
name: stop
on: { manual: true }
steps:
  - id: broken
    fail: { message: "stopped at \${{ 6 * 7 }}" }
  - id: never
    uses: log
    with: { message: never }
`);
      expect(s.status).to.equal('failed');
      expect(s.error).to.equal('step `broken` failed: stopped at 42');
      expect(step(s, 'never')).to.equal(undefined);
      expect(await store.getRun(s.runId)).to.include({
        status: 'failed',
        error: 'step `broken` failed: stopped at 42',
      });
    });

    it('a rescue step that fails fails the run', async () => {
      const s = await run(`
version: 1
name: rescue-fails
on: { manual: true }
steps:
  - id: broken
    fail: first
    onError:
      - id: rescue
        fail: second
`);
      expect(s.status).to.equal('failed');
      expect(s.error).to.equal('step `rescue` failed: second');
    });

    it('a failed device-state step still counts its failed devices in the summary, as the ledger does', async () => {
      // The request names an unknown device: the service refuses it whole (400), and both devices fail.
      const [first] = (await accountDevices(emu, account)).filter((d) => d.state === 'active');
      const s = await run(
        `
version: 1
name: suspend-with-a-bad-device
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: suspend
    uses: devices.suspend
    with:
      accountName: \${{ inputs.account }}
      devices: [{ id: "${imei(first!)}", kind: imei }, { id: "${UNKNOWN_IMEI}", kind: imei }]
    onError: continue
`,
        { inputs: { account } },
      );
      expect(s.status, s.error).to.equal('succeeded');
      const ledger = await store.deviceResults(s.runId, 'suspend');
      expect(ledger.map((r) => [r.outcome, r.errorType])).to.deep.equal([
        ['failed', 'INVALID_PARAMETER'],
        ['failed', 'INVALID_PARAMETER'],
      ]);
      const expected = {
        total: 2,
        accepted: 0,
        succeeded: 0,
        failed: 2,
        skipped: 0,
        unconfirmed: 0,
        byError: { INVALID_PARAMETER: 2 },
      };
      expect(step(s, 'suspend')?.devices, 'step summary').to.deep.equal(expected);
      expect(s.devices, 'run summary').to.deep.equal(expected);
    });
  });

  describe('finally', () => {
    it('runs after a failure, sees the failed step, and the run keeps the first error', async () => {
      const s = await run(`
version: 1
name: cleanup
on: { manual: true }
steps:
  - id: first
    set: { x: 1 }
  - id: broken
    fail: broken on purpose
  - id: never
    uses: log
    with: { message: never }
finally:
  - id: cleanup
    uses: log
    with: { message: "cleanup after \${{ steps.broken.status }} (x = \${{ vars.x }})" }
`);
      expect(s.status).to.equal('failed');
      expect(s.error).to.equal('step `broken` failed: broken on purpose');
      expect(step(s, 'never')).to.equal(undefined);
      expect(step(s, 'cleanup')?.status).to.equal('succeeded');
      expect(logged()).to.include('cleanup after failed (x = 1)');
      expect(logged()).not.to.include('never');
    });

    it("reads the run's outcome so far in `run.status` and `run.error`: running during the steps", async () => {
      const failed = await run(`
version: 1
name: outcome
on: { manual: true }
steps:
  - id: first
    uses: log
    with: { message: "during: \${{ run.status }} [\${{ run.error }}]" }
  - id: broken
    fail: broken on purpose
finally:
  - id: page
    if: \${{ run.status != "succeeded" }}
    uses: log
    with: { message: "after: \${{ run.status }}: \${{ run.error }}" }
`);
      expect(failed.status).to.equal('failed');
      expect(logged()).to.include('during: running []');
      expect(logged()).to.include('after: failed: step `broken` failed: broken on purpose');
      const fine = await run(`
version: 1
name: outcome-fine
on: { manual: true }
steps:
  - id: first
    uses: log
    with: { message: fine }
finally:
  - id: say
    uses: log
    with: { message: "after: \${{ run.status }} [\${{ run.error }}]" }
`);
      expect(fine.status).to.equal('succeeded');
      expect(logged()).to.include('after: succeeded []');
    });

    it('runs after a success, and a failure in it fails the run', async () => {
      const s = await run(`
version: 1
name: cleanup-fails
on: { manual: true }
steps:
  - id: fine
    uses: log
    with: { message: fine }
finally:
  - id: cleanup
    fail: cleanup failed
`);
      expect(step(s, 'fine')?.status).to.equal('succeeded');
      expect(s.status).to.equal('failed');
      expect(s.error).to.equal('step `cleanup` failed: cleanup failed');
    });
  });

  describe('timeout', () => {
    it('ends a step that runs too long, with a message naming the timeout', async () => {
      const began = Date.now();
      const s = await run(`
version: 1
name: too-slow
on: { manual: true }
steps:
  - id: slow
    wait: 10s
    timeout: 100ms
    onError: continue
  - id: next
    uses: log
    with: { message: "\${{ steps.slow.error }}" }
`);
      // Ended before the wait would have: 10 s, against some 100 ms here (a loaded machine is far from 10 s).
      expect(Date.now() - began).to.be.below(10_000);
      expect(s.status, s.error).to.equal('succeeded');
      expect(step(s, 'slow')).to.include({ status: 'failed', error: 'timed out after 100ms' });
      expect(logged()).to.include('timed out after 100ms');
    });

    it('ends an API call slower than the step timeout, and fails the run', async () => {
      await setFaults(emu, { latencyMs: 10_000 });
      const began = Date.now();
      const s = await run(
        `
version: 1
name: slow-api
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: slow
    uses: devices.list
    with: { accountName: \${{ inputs.account }} }
    timeout: 200ms
`,
        { inputs: { account } },
      );
      // Ended without the answer: it comes after 10 s, against some 200 ms here.
      expect(Date.now() - began).to.be.below(10_000);
      expect(s.status).to.equal('failed');
      expect(s.error).to.equal('step `slow` failed: timed out after 200ms');
    });

    it('a forEach past its timeout stops the iteration under way: no step of it is left running', async () => {
      const s = await run(`
version: 1
name: loop-too-long
on: { manual: true }
steps:
  - id: each
    forEach:
      items: '\${{ [1, 2, 3, 4, 5, 6] }}'
      steps:
        - id: hold
          wait: 200ms
        - id: note
          uses: log
          with: { message: 'iteration \${{ item }} done' }
    timeout: 300ms
`);
      expect([s.status, s.error]).to.deep.equal(['failed', 'step `each` failed: timed out after 300ms']);
      // Before, the loop went on after its step, and its run, had ended: `hold` was still running.
      expect(step(s, 'hold')).to.include({ status: 'cancelled', error: 'timed out after 300ms' });
      expect(step(s, 'each')).to.include({ status: 'failed', error: 'timed out after 300ms' });
    });

    it('retry.on [timeout] tries a read again when an attempt passes the step timeout', async () => {
      // The first attempt meets 3 s of latency; the faults are lifted 200 ms later, so a second attempt is fast.
      await setFaults(emu, { latencyMs: 3000 });
      const lift = setTimeout(() => void setFaults(emu, {}), 200);
      try {
        const s = await run(
          `
version: 1
name: retry-on-timeout
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: slow
    uses: devices.list
    with: { accountName: \${{ inputs.account }} }
    timeout: 700ms
    retry: { on: [timeout], maxAttempts: 3, delay: 10ms }
`,
          { inputs: { account } },
        );
        expect(s.status, s.error).to.equal('succeeded');
        expect(step(s, 'slow')?.attempts).to.equal(2);
      } finally {
        clearTimeout(lift);
      }
    });
  });

  describe('parallel', () => {
    it('runs its steps at once, and each is in the summary', async () => {
      const s = await run(
        `
version: 1
name: together
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: both
    parallel:
      - id: a
        wait: 300ms
      - id: b
        wait: 300ms
      - id: list
        uses: devices.list
        with: { accountName: \${{ inputs.account }}, currentState: active }
  - id: after
    uses: log
    with: { message: "listed \${{ size(steps.list.items) }}" }
`,
        { inputs: { account } },
      );
      expect(s.status, s.error).to.equal('succeeded');
      // The two waits overlapped: each began before the other ended (one after the other, b begins as a ends).
      const [a, b] = [step(s, 'a'), step(s, 'b')];
      expect(Date.parse(b?.startedAt ?? ''), 'b began before a ended').to.be.below(
        Date.parse(a?.endedAt ?? ''),
      );
      expect(Date.parse(a?.startedAt ?? ''), 'a began before b ended').to.be.below(
        Date.parse(b?.endedAt ?? ''),
      );
      for (const id of ['both', 'a', 'b', 'list', 'after'])
        expect(step(s, id)?.status, id).to.equal('succeeded');
      const active = (await accountDevices(emu, account)).filter((d) => d.state === 'active');
      expect(logged()).to.include(`listed ${active.length}`);
    });

    it('a failing branch does not end the run while another branch is still changing devices', async () => {
      const [d1, d2] = (await accountDevices(emu, account)).filter((d) => d.state === 'active');
      const before = await calls(emu);
      await setFaults(emu, { latencyMs: 300 });
      const s = await run(
        `
version: 1
name: one-branch-fails
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: both
    parallel:
      - id: boom
        fail: boom
      - id: suspend
        uses: devices.suspend
        with:
          accountName: \${{ inputs.account }}
          devices: [{ id: "${imei(d1!)}", kind: imei }, { id: "${imei(d2!)}", kind: imei }]
`,
        { inputs: { account } },
      );
      const returned = structuredClone(s);
      const atEnd = await calls(emu);
      await new Promise((r) => setTimeout(r, 700));
      const later = await calls(emu);
      expect(s.status).to.equal('failed');
      // When the run has ended, none of its steps is still running (in the summary returned and stored)...
      const running = (x: RunSummary | undefined) =>
        (x?.steps ?? []).filter((st) => st.status === 'running').map((st) => st.id);
      expect(running(returned), 'returned summary').to.deep.equal([]);
      expect(running((await store.getRun(s.runId))?.summary), 'stored summary').to.deep.equal([]);
      // ...and nothing changes afterwards.
      expect(later.devices, 'mutations after the run ended').to.deep.equal(atEnd.devices);
      expect(later.actions['devices.suspend'] ?? 0).to.equal(atEnd.actions['devices.suspend'] ?? 0);
      expect(before.devices[imei(d1!)]).to.equal(undefined);
    });
  });

  /** The test webhooks listen on loopback, which a webhook may reach only when allowed (FLEETBOOK_WEBHOOK_ALLOW). */
  const LOOPBACK_ALLOWED = engineSettings({ webhookAllow: ['127.0.0.1'] });

  /** A playbook of one notify.webhook step to `inputs.url`, with `extra` (one line) added to the step. */
  const webhookPlaybook = (extra = '') => `
version: 1
name: webhook
on: { manual: true }
inputs:
  url: { type: string, required: true }
steps:
  - id: tell
    uses: notify.webhook
    with: { url: \${{ inputs.url }}, body: { text: hello } }
    ${extra}
`;

  describe('retry of engine actions', () => {
    it('notify.webhook refused at connect is a network error, retried by retry.on: [network]', async () => {
      // A port nothing listens on: every attempt is refused before anything is sent.
      const server = createServer();
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      const port = (server.address() as AddressInfo).port;
      await new Promise<void>((r) => server.close(() => r()));
      const s = await run(webhookPlaybook('retry: { on: [network], maxAttempts: 3, delay: 10ms }'), {
        inputs: { url: `http://127.0.0.1:${port}/hook` },
        engine: LOOPBACK_ALLOWED,
      });
      expect(s.status).to.equal('failed');
      expect(step(s, 'tell')).to.include({ status: 'failed', attempts: 3 });
      expect(step(s, 'tell')?.error).to.match(/notify\.webhook: .*ECONNREFUSED/);
    });

    it('notify.webhook is sent again on a 5xx, as its retry.on says', async () => {
      // A webhook that answers 503 once, then 200.
      const bodies: string[] = [];
      const server = createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          bodies.push(body);
          res.writeHead(bodies.length === 1 ? 503 : 200, { 'content-type': 'application/json' }).end('{}');
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
        const s = await run(
          webhookPlaybook('retry: { on: [http.5xx, network], maxAttempts: 3, delay: 10ms }'),
          { inputs: { url }, engine: LOOPBACK_ALLOWED },
        );
        expect(bodies.map((b) => JSON.parse(b) as unknown)).to.deep.equal([
          { text: 'hello' },
          { text: 'hello' },
        ]);
        expect(s.status, s.error).to.equal('succeeded');
      } finally {
        await new Promise<void>((r) => server.close(() => r()));
      }
    });
  });

  describe('cancelling engine actions', () => {
    /** A webhook that never answers, and tells when a request to it is given up (its socket closes). */
    async function silentHook(): Promise<{ url: string; closed: Promise<number>; close(): Promise<void> }> {
      let started = 0;
      let resolveClosed: (at: number) => void = () => undefined;
      const closed = new Promise<number>((r) => (resolveClosed = r));
      const server = createServer((req) => {
        started = Date.now();
        req.socket.on('close', () => resolveClosed(Date.now() - started));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
        closed,
        close: () => new Promise<void>((r) => server.close(() => r())),
      };
    }
    it('a step timeout abandons the webhook request, not only the step', async () => {
      const hook = await silentHook();
      try {
        const s = await run(webhookPlaybook('timeout: 200ms'), {
          inputs: { url: hook.url },
          engine: LOOPBACK_ALLOWED,
        });
        expect(s.status).to.equal('failed');
        expect(s.error).to.equal('step `tell` failed: timed out after 200ms');
        // The request was given up with the step, not left waiting for its own 30 s timeouts.
        expect(await hook.closed).to.be.lessThan(5_000);
      } finally {
        await hook.close();
      }
    });

    it('a cancelled run abandons the webhook request it is waiting on', async () => {
      const hook = await silentHook();
      const cancel = new AbortController();
      try {
        const running = run(webhookPlaybook(), {
          inputs: { url: hook.url },
          signal: cancel.signal,
          engine: LOOPBACK_ALLOWED,
        });
        setTimeout(() => cancel.abort(new Error('cancelled by the test')), 200);
        const s = await running;
        expect(s.status).to.equal('cancelled');
        // The step in flight was cancelled with the run: it did not fail.
        expect(s.steps.map((st) => [st.id, st.status, st.error])).to.deep.equal([
          ['tell', 'cancelled', 'cancelled by the test'],
        ]);
        expect(s.error).to.equal('cancelled by the test');
        expect(await hook.closed).to.be.lessThan(5_000);
      } finally {
        await hook.close();
      }
    });

    it('a cancelled loop: the step in flight and its loop say cancelled, and `finally` sees it', async () => {
      const cancel = new AbortController();
      const running = run(
        `
version: 1
name: cancelled-loop
on: { manual: true }
steps:
  - id: loop
    forEach:
      items: \${{ [1, 2] }}
      steps:
        - id: pause
          wait: 10s
  - id: never
    fail: never reached
finally:
  - id: cleanup
    uses: log
    with: { message: "after \${{ steps.loop.status }}: \${{ steps.loop.error }} (run \${{ run.status }}: \${{ run.error }})" }
  - id: broken
    fail: broken after the cancel
`,
        { signal: cancel.signal },
      );
      setTimeout(() => cancel.abort(new Error('cancelled from the console')), 200);
      const s = await running;
      expect(s.status).to.equal('cancelled');
      expect(s.error).to.equal('cancelled from the console');
      expect(s.steps.map((st) => [st.id, st.status])).to.deep.equal([
        ['loop', 'cancelled'],
        ['pause', 'cancelled'],
        ['cleanup', 'succeeded'],
        // Begun after the cancel, it was not cancelled: it failed, for its own reason.
        ['broken', 'failed'],
      ]);
      expect(step(s, 'broken')?.error).to.equal('broken after the cancel');
      expect(logged()).to.include(
        'after cancelled: cancelled from the console (run cancelled: cancelled from the console)',
      );
      // A cancellation is not an error: the only step said to have failed is the one that did.
      expect(lines.filter((l) => l.message === 'step failed').map((l) => l.meta.step)).to.deep.equal([
        'broken',
      ]);
      expect(lines.filter((l) => l.message === 'step cancelled').map((l) => l.meta.step)).to.deep.equal([
        'pause',
        'loop',
      ]);
    });

    /** Resolves once the runner logged `message` for step `id`. */
    const logs = (message: string, id: string) =>
      until(() => lines.some((l) => l.message === message && l.meta.step === id));

    it('after a cancel, `finally` still acts: it suspends and restores a device the run left', async () => {
      const cancel = new AbortController();
      const [device] = (await accountDevices(emu, account)).filter((d) => d.state === 'active');
      const id = imei(device!);
      const running = run(
        `
version: 1
name: cancelled-then-restore
on: { manual: true }
inputs:
  account: { type: string }
  imei: { type: string }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: "\${{ inputs.account }}", devices: [{ id: "\${{ inputs.imei }}", kind: imei }] }
  - id: pause
    wait: 10m
finally:
  - id: restore
    uses: devices.restore
    with: { accountName: "\${{ inputs.account }}", devices: [{ id: "\${{ inputs.imei }}", kind: imei }] }
`,
        { signal: cancel.signal, inputs: { account, imei: id } },
      );
      await logs('step started', 'pause');
      cancel.abort(new Error('cancelled from the console'));
      const s = await running;
      expect(s.status).to.equal('cancelled');
      expect(s.error).to.equal('cancelled from the console');
      expect(s.steps.map((st) => [st.id, st.status])).to.deep.equal([
        ['suspend', 'succeeded'],
        ['pause', 'cancelled'],
        ['restore', 'succeeded'],
      ]);
      // The emulator restored the device: it is active again, as the playbook's author meant.
      const now = (await accountDevices(emu, account)).find((d) => imei(d) === id);
      expect(now?.state).to.equal('active');
    });

    it("a cancelled run's `finally` ends when the run is stopped: its step in flight says why", async () => {
      const cancel = new AbortController();
      const stop = new AbortController();
      const running = run(
        `
version: 1
name: cancelled-then-stopped
on: { manual: true }
steps:
  - id: pause
    wait: 10m
finally:
  - id: linger
    wait: 10m
  - id: after
    uses: log
    with: { message: "after the stop" }
`,
        { signal: cancel.signal, stop: stop.signal },
      );
      await logs('step started', 'pause');
      cancel.abort(new Error('cancelled from the console'));
      await logs('step started', 'linger');
      stop.abort(new Error('stopped: fleetbook is stopping'));
      const s = await running;
      expect(s.status).to.equal('cancelled');
      expect(s.error).to.equal('cancelled from the console');
      expect(s.steps.map((st) => [st.id, st.status, st.error])).to.deep.equal([
        ['pause', 'cancelled', 'cancelled from the console'],
        ['linger', 'cancelled', 'stopped: fleetbook is stopping'],
      ]);
    });
  });

  describe('forEach', () => {
    it('an inner step, referenced after the loop (validate accepts it), gives its totals over the iterations', async () => {
      const s = await run(
        `
version: 1
name: inner-totals
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: \${{ inputs.account }}, currentState: active }
  - id: batches
    forEach:
      items: \${{ steps.devices.items }}
      batchSize: 10
      steps:
        - id: locate
          uses: location.locate
          with: { accountName: \${{ inputs.account }}, deviceList: \${{ item }} }
  - id: after
    uses: log
    with: { message: "located \${{ steps.locate.devices.total }} of \${{ steps.batches.devices.total }}" }
`,
        { inputs: { account } },
      );
      const n = step(s, 'locate')?.devices.total ?? 0;
      expect(n).to.be.greaterThan(10);
      expect(s.status, s.error).to.equal('succeeded');
      expect(logged()).to.include(`located ${n} of ${n}`);
    });

    it('logs its inner steps at debug and its own progress at info, a line at each tenth of its iterations', async () => {
      const s = await run(
        `
version: 1
name: fan-out-log
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: \${{ inputs.account }} }
  - id: batches
    forEach:
      items: \${{ steps.devices.items }}
      batchSize: 2
      concurrency: 3
      steps:
        - id: locate
          uses: location.locate
          with: { accountName: \${{ inputs.account }}, deviceList: \${{ item }} }
`,
        { inputs: { account } },
      );
      expect(s.status, s.error).to.equal('succeeded');
      const located = step(s, 'locate')?.devices.total ?? 0;
      expect(located).to.be.greaterThan(20);
      const iterations = Math.ceil(located / 2);
      const inner = lines.filter((l) => l.meta.step === 'locate');
      expect(inner.map((l) => l.level)).to.have.members(Array(2 * iterations).fill('debug'));
      const progress = lines.filter((l) => l.message === 'fan-out progress');
      expect(progress.map((l) => l.level)).to.deep.equal(Array(10).fill('info'));
      expect(progress.map((l) => l.meta.of)).to.deep.equal(Array(10).fill(iterations));
      const done = progress.map((l) => l.meta.iterations as number);
      expect(done).to.deep.equal([...done].sort((a, b) => a - b));
      expect(done.at(-1)).to.equal(iterations);
      expect(progress.at(-1)?.meta.devices).to.equal(located);
      // The steps outside the fan-out still log their start and end at info.
      expect(
        lines.filter((l) => l.meta.step === 'batches' && l.level === 'info').map((l) => l.message),
      ).to.include.members(['step started', 'step ended']);
    });
  });

  describe('set, fail and if', () => {
    it('set keeps types, if skips or runs, fail interpolates its message', async () => {
      const s = await run(`
version: 1
name: vars
on: { manual: true }
vars: { base: 2 }
steps:
  - id: compute
    set:
      n: \${{ vars.base + 3 }}
      label: "n=\${{ vars.base + 3 }}"
      list: \${{ [1, 2, 3] }}
  - id: five
    if: \${{ vars.n == 5 && size(vars.list) == 3 }}
    uses: log
    with: { message: "\${{ vars.label }}|\${{ vars.n + 1 }}|\${{ vars.list[2] * 2 }}" }
  - id: bigger
    if: \${{ vars.n > 5 }}
    uses: log
    with: { message: bigger }
  - id: off
    if: false
    uses: log
    with: { message: off }
  - id: check
    if: \${{ steps.bigger.status == "skipped" }}
    fail: "n is \${{ vars.n }}"
`);
      expect(logged()).to.include('n=5|6|6');
      expect(logged()).not.to.include('bigger');
      expect(step(s, 'five')?.status).to.equal('succeeded');
      expect(step(s, 'bigger')?.status).to.equal('skipped');
      expect(step(s, 'off')?.status).to.equal('skipped');
      expect(s.status).to.equal('failed');
      expect(s.error).to.equal('step `check` failed: n is 5');
    });

    it('a var whose value fails to render names the var, and the run fails before its first step', async () => {
      const s = await run(`
version: 1
name: var-fails
on: { manual: true }
inputs:
  opts: { type: object, default: {} }
vars:
  threshold: 90
  region: \${{ inputs.opts.region }}
steps:
  - id: tell
    uses: log
    with: { message: "\${{ vars.region }}" }
`);
      expect(s.status).to.equal('failed');
      expect(s.error).to.match(/^vars.region: No such key: region\n/);
      expect(s.steps).to.deep.equal([]);
    });

    it('a variable of env that fleetbook withholds fails as withheld, not as missing', async () => {
      const s = await run(
        `
version: 1
name: env-withheld
on: { manual: true }
inputs:
  name: { type: string, default: DB_PASSWORD }
steps:
  - id: tell
    uses: log
    with: { message: "\${{ env[inputs.name] }}" }
`,
        { env: { HOME: '/home/fleet' } },
      );
      expect(s.error).to.match(
        /^step `tell` failed: `env.DB_PASSWORD` is withheld: it is named like a password, secret, token, key or credential; use `secrets.DB_PASSWORD`, set as FLEETBOOK_SECRET_DB_PASSWORD$/,
      );
    });

    it('a missing key named like a secret, in an expression that reads env[...], is not said to be withheld', async () => {
      const s = await run(
        `
version: 1
name: env-not-withheld
on: { manual: true }
inputs:
  name: { type: string, default: HOME }
  opts: { type: object, default: {} }
steps:
  - id: tell
    uses: log
    with: { message: "\${{ env[inputs.name] + inputs.opts.API_KEY }}" }
`,
        { env: { HOME: '/home/fleet' } },
      );
      expect(s.error).to.match(/^step `tell` failed: No such key: API_KEY\n/);
    });

    it('reading the output of a step that was skipped or failed says so', async () => {
      const [device] = await accountDevices(emu, account);
      const s = await run(
        `
version: 1
name: not-run
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: suspend
    if: \${{ inputs.account == "none" }}
    uses: devices.suspend
    with: { accountName: '\${{ inputs.account }}', devices: [{ deviceIds: [{ id: '${imei(device!)}', kind: imei }] }] }
  - id: broken
    uses: devices.list
    with: { accountName: '9999999999-99999' }
    onError: continue
  - id: note
    uses: log
    with: { message: "\${{ steps.suspend.output.requestId }} \${{ steps.broken.output.count }}" }
`,
        { inputs: { account } },
      );
      expect(step(s, 'suspend')?.status).to.equal('skipped');
      expect(step(s, 'broken')?.status).to.equal('failed');
      expect(s.status).to.equal('failed');
      // The first expression that fails is the one read first; its error names that step's status.
      expect(s.error?.split('\n')[0]).to.equal(
        'step `note` failed: No such key: requestId (step `suspend` was skipped: its output is null)',
      );
      const r = await run(`
version: 1
name: not-run-failed
on: { manual: true }
steps:
  - id: broken
    uses: devices.list
    with: { accountName: '9999999999-99999' }
    onError: continue
  - id: note
    uses: log
    with: { message: "\${{ steps.broken.output.count }}" }
`);
      expect(r.error?.split('\n')[0]).to.equal(
        'step `note` failed: No such key: count (step `broken` failed: its output is null)',
      );
      // A step that ran to its end reads as before, and an error elsewhere names no step.
      const ok = await run(`
version: 1
name: ran
on: { manual: true }
vars: { key: nothing }
steps:
  - id: first
    uses: log
    with: { message: hello }
  - id: note
    uses: log
    with: { message: "\${{ steps.first.output[vars.key] }}" }
`);
      expect(ok.error?.split('\n')[0]).to.equal('step `note` failed: No such key: nothing');
    });
  });

  describe('forEach toleratedFailurePercent', () => {
    const loop = (tolerated: number) => `
version: 1
name: tolerate
on: { manual: true }
steps:
  - id: loop
    forEach:
      items: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
      concurrency: 3
      toleratedFailurePercent: ${tolerated}
      steps:
        - id: check
          if: \${{ item % 5 == 0 }}
          fail: "item \${{ item }} at \${{ index }}"
        - id: seen
          uses: log
          with: { message: "item \${{ item }}" }
  - id: after
    uses: log
    with: { message: "\${{ steps.loop.output.failed }} of \${{ steps.loop.output.iterations }} failed" }
`;

    it('succeeds when the share of failed iterations is within the tolerance', async () => {
      const s = await run(loop(20));
      expect(s.status, s.error).to.equal('succeeded');
      expect(logged()).to.include('2 of 10 failed');
      // The failed iterations stopped at their failing step; the others went on.
      const seen = logged().filter((m) => /^item \d+$/.test(m));
      expect(seen.sort()).to.deep.equal(
        ['1', '2', '3', '4', '6', '7', '8', '9'].map((n) => `item ${n}`).sort(),
      );
    });

    it('fails when it is above, with the counts in the message', async () => {
      const s = await run(loop(10));
      expect(s.status).to.equal('failed');
      expect(s.error).to.equal('step `loop` failed: 2 of 10 iterations failed (20.0 %, tolerated 10 %)');
      expect(step(s, 'after')).to.equal(undefined);
    });
  });

  describe('typed inputs', () => {
    const pb = playbook(TYPED_YAML);

    it('coerces --input strings to the declared types and applies defaults', () => {
      expect(
        coerceInputs(pb, {
          count: '42',
          ratio: '2.5',
          dry: 'true',
          ids: '["a","b"]',
          opts: '{"k":1}',
          code: '0042',
        }),
      ).to.deep.equal({
        count: 42,
        ratio: 2.5,
        dry: true,
        ids: ['a', 'b'],
        opts: { k: 1 },
        code: '0042',
        mode: 'fast',
      });
      expect(coerceInputs(pb, { count: '1' })).to.deep.equal({
        count: 1,
        ratio: 0.5,
        dry: false,
        ids: [],
        opts: {},
        code: '007',
        mode: 'fast',
      });
    });

    it('refuses unknown, missing, mistyped and out-of-enum inputs with a clear message', () => {
      const fails = (given: Record<string, unknown>) => () => coerceInputs(pb, given);
      expect(fails({ count: '1', colour: 'red' })).to.throw(/unknown input `colour`/);
      expect(fails({})).to.throw('input `count` (integer) is required');
      expect(fails({ count: '1.5' })).to.throw(/input `count`/);
      expect(fails({ count: '1', dry: 'yes' })).to.throw(
        'input `dry` is a boolean: give true or false (got "yes")',
      );
      expect(fails({ count: '1', ids: '{"a":1}' })).to.throw('input `ids` must be of type array');
      // Text that is no JSON, said of a value given as data (the CLI and the console word it themselves).
      expect(fails({ count: '1', ids: 'a,b' })).to.throw(
        'input `ids` is an array: give it as a JSON array, e.g. ["a","b"] (got "a,b")',
      );
      expect(fails({ count: '1', mode: 'medium' })).to.throw(
        'input `mode`: "medium" is not one of "fast", "slow" (enum)',
      );
    });

    it('names every missing input at once, with its type, and what a lone one is', () => {
      const two = playbook(`version: 1
name: two
on: { manual: true }
inputs:
  account: { type: string, required: true }
  triggerIds: { type: array, required: true, description: The triggerId of each trigger to delete. }
steps:
  - { id: show, uses: log, with: { message: hi } }
`);
      expect(() => coerceInputs(two, {})).to.throw(
        'inputs `account` (string), `triggerIds` (array) are required',
      );
      expect(() => coerceInputs(two, { account: 'a' })).to.throw(
        'input `triggerIds` (array) is required: The triggerId of each trigger to delete.',
      );
    });

    it('refuses an empty or non-numeric value for a number input, naming the value given', () => {
      // `--input count=` must not become 0.
      expect(() => coerceInputs(pb, { count: '' })).to.throw(/input `count`/);
      expect(() => coerceInputs(pb, { count: '1', ratio: ' ' })).to.throw(/input `ratio`/);
      // The message shows what was typed, not `null`.
      expect(() => coerceInputs(pb, { count: 'many' })).to.throw(/input `count`.*"many"/);
    });

    it('a run coerces its inputs, stores them typed, and uses them in expressions', async () => {
      const s = await run(TYPED_YAML, { inputs: { count: '41', dry: 'true', ids: '[1,2,3]' } });
      expect(s.status, s.error).to.equal('succeeded');
      expect(logged()).to.include('42 1 true 3 007');
      expect((await store.getRun(s.runId))?.inputs).to.deep.include({ count: 41, dry: true, ids: [1, 2, 3] });
    });

    it('a run with a bad input fails before any step', async () => {
      const s = await run(TYPED_YAML, { inputs: { count: 'many' } });
      expect(s.status).to.equal('failed');
      expect(s.error).to.match(/^input `count` /);
      expect(s.steps).to.deep.equal([]);
    });
  });
});
