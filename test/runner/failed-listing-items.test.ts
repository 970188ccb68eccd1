/**
 * The items of a listing that failed are not known, and reading them says so. Before, `steps.<id>.items` of a
 * `devices.list` that failed (an account that does not exist: HTTP 400) read as an empty list, and a forEach over
 * accounts logged `9999999999-99999: 0 suspended`: "none found" where nothing is known of the devices. A listing
 * that failed after some pages, or that the run never reached (read from `finally`), said the same. Its items
 * read in an expression, passed whole to a location report (from the store), or as a forEach's items, now fail
 * the evaluation with an error that names the step and why; the same after a resume.
 *
 * What is true stays: a device action that failed part-way has its per-device results as items (a later step
 * sends its failed devices again), resumed too; a step skipped by its `if` or given no devices has none.
 */
import { expect } from 'chai';
import { runPlaybook } from '../../src/runner/runner.js';
import type { RunOptions } from '../../src/runner/types.js';
import { createClient } from '../../src/api/client.js';
import {
  calls,
  captureLogger,
  interruptedRun,
  memoryStore,
  onEmulator,
  playbook,
  RATES,
  setFaults,
  skippingClock,
  stoppedClock,
  runLogged,
  stepOf,
  unstepped,
} from './helpers.js';

/** An account the emulator does not have: its device listing is refused (HTTP 400). */
const NO_SUCH_ACCOUNT = '9999999999-99999';

const head = (name: string) => `version: 1
name: ${name}
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:`;

/** A listing of the account the input names, which does not exist: it fails, and the run goes on. */
const FAILED_LISTING = `
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}" }
    onError: continue`;

/** What reading the items of step `devices`, which failed, says (the step's own error follows in parentheses). */
const UNKNOWN =
  /`steps\.devices\.items` cannot be read: step `devices` failed \(.+\), so what it would have found is not known/;

describe('runner: the items of a listing that failed are not known', function () {
  this.timeout(30_000);
  const t = onEmulator({ accounts: 2, devicesPerAccount: 20 });

  const run = (yaml: string, o: Partial<RunOptions> = {}) =>
    runLogged(t, yaml, { inputs: { account: NO_SUCH_ACCOUNT }, ...o });

  it('a forEach over accounts: the log of an account whose listing failed fails, not "0 suspended"', async () => {
    const [a, b] = t.emu.defaults.accounts as [string, string];
    const { s, lines } = await run(
      `version: 1
name: usage-by-account
on: { manual: true }
steps:
  - id: each
    forEach:
      items: ["${a}", "${NO_SUCH_ACCOUNT}", "${b}"]
      steps:
        - id: usage
          uses: devices.list
          with: { accountName: "\${{ item }}" }
          onError: continue
        - id: say
          uses: log
          with: { message: '\${{ item }}: \${{ size(steps.usage.items) }} suspended' }
`,
      { inputs: {} },
    );
    const messages = lines.filter((l) => l.level === 'info').map((l) => l.message);
    expect(messages).to.include(`${a}: 20 suspended`);
    expect(messages).to.include(`${b}: 20 suspended`);
    expect(
      messages.filter((m) => m.startsWith(NO_SUCH_ACCOUNT)),
      'no count of unknown devices',
    ).to.deep.equal([]);
    const say = stepOf(s, 'say');
    expect(say.status).to.equal('failed');
    expect(say.error).to.match(/`steps\.usage\.items` cannot be read: step `usage` failed \(.+\)/);
    expect(s.status).to.equal('failed');
    expect(s.error).to.equal('step `each` failed: 1 of 3 iterations failed (33.3 %, tolerated 0 %)');
  });

  it('an expression held in memory, whole or in a string, fails naming the step and why', async () => {
    for (const message of ['found ${{ size(steps.devices.items) }}', 'found ${{ steps.devices.items }}']) {
      const { s } = await run(`${head('count-failed')}${FAILED_LISTING}
  - id: say
    uses: log
    with: { message: "${message}" }
`);
      expect(stepOf(s, 'devices').status).to.equal('failed');
      expect(stepOf(s, 'say').status, message).to.equal('failed');
      expect(stepOf(s, 'say').error, message).to.match(UNKNOWN);
      expect(stepOf(s, 'say').error, 'said once').not.to.include('its output is null');
      expect(s.error).to.match(/^step `say` failed: `steps\.devices\.items` cannot be read/);
    }
  });

  it('a condition on its status reads it only when it succeeded', async () => {
    const { s, lines } = await run(`${head('guarded')}${FAILED_LISTING}
  - id: say
    uses: log
    with:
      message: "\${{ steps.devices.status == 'succeeded' ? string(size(steps.devices.items)) : 'not known' }}"
`);
    expect(s.status, s.error).to.equal('succeeded');
    expect(unstepped(lines)).to.include('not known');
  });

  it('a location report taking them whole (from the store) fails, not skipped for "no devices"', async () => {
    const { s } = await run(`${head('report-failed')}${FAILED_LISTING}
  - id: report
    uses: location.createReport
    with: { accountName: "\${{ inputs.account }}", deviceList: "\${{ steps.devices.items }}" }
`);
    const report = stepOf(s, 'report');
    expect(report.status).to.equal('failed');
    expect(report.error).to.match(UNKNOWN);
    expect(report.calls).to.equal(0);
  });

  it('a forEach\'s items fail, not a forEach skipped for "no items"', async () => {
    const { s } = await run(`${head('each-failed')}${FAILED_LISTING}
  - id: each
    forEach:
      items: "\${{ steps.devices.items }}"
      steps:
        - id: say
          uses: log
          with: { message: "\${{ item.id }}" }
`);
    expect(stepOf(s, 'each').status).to.equal('failed');
    expect(stepOf(s, 'each').error).to.match(UNKNOWN);
  });

  it('a listing that failed after some pages: its first pages are not the list', async () => {
    // One request a call: the fault below fails the next page at once rather than after the client's retries.
    const client = createClient({
      baseUrl: t.emu.baseUrl,
      clientId: t.emu.defaults.clientId,
      clientSecret: t.emu.defaults.clientSecret,
      username: t.emu.defaults.username,
      password: t.emu.defaults.password,
      rates: RATES,
      retry: { maxAttempts: 1 },
    });
    // Once the first page came, every request of the service fails (500).
    const pages = client.pages.bind(client);
    client.pages = async function* (...args: Parameters<typeof pages>) {
      let first = true;
      for await (const page of pages(...args)) {
        yield page;
        if (first) await setFaults(t.emu, { errorRate: 1 });
        first = false;
      }
    } as typeof client.pages;
    try {
      const { s } = await run(
        `${head('partly-listed')}
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}", maxNumberOfDevices: 5 }
    onError: continue
  - id: say
    uses: log
    with: { message: "found \${{ size(steps.devices.items) }}" }
`,
        { client, inputs: { account: t.account } },
      );
      expect(stepOf(s, 'devices').status).to.equal('failed');
      expect(stepOf(s, 'devices').calls, 'a page came, then one failed').to.equal(2);
      expect(stepOf(s, 'say').error).to.match(UNKNOWN);
    } finally {
      await setFaults(t.emu, {});
      await client.close();
    }
  });

  it('a listing the run never reached, read from `finally`: not known either', async () => {
    const { s } = await run(`${head('never-reached')}
  - id: stop
    fail: stopped early
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}" }
finally:
  - id: say
    uses: log
    with: { message: "found \${{ size(steps.devices.items) }}" }
`);
    expect(stepOf(s, 'say').status).to.equal('failed');
    expect(stepOf(s, 'say').error).to.match(
      /`steps\.devices\.items` cannot be read: step `devices` was skipped \(the run never reached it\)/,
    );
    expect(s.error).to.equal('step `stop` failed: stopped early');
  });

  it('a listing skipped by its `if`, and a device action given no devices, have no items: []', async () => {
    const { s, lines } = await run(
      `${head('skipped-items')}
  - id: devices
    uses: devices.list
    if: false
    with: { accountName: "\${{ inputs.account }}" }
  - id: locate
    uses: location.locate
    with: { accountName: "\${{ inputs.account }}", deviceList: "\${{ steps.devices.items }}" }
  - id: say
    uses: log
    with: { message: "\${{ size(steps.devices.items) }} listed, \${{ size(steps.locate.items) }} located" }
`,
      { inputs: { account: t.account } },
    );
    expect(s.status, s.error).to.equal('succeeded');
    expect(stepOf(s, 'locate').status).to.equal('skipped');
    expect(unstepped(lines)).to.include('0 listed, 0 located');
  });

  /** Locates the account's devices, failing on the first failed one and going on. */
  const LOCATE_FAILS = `
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}" }
  - id: locate
    uses: location.locate
    with: { accountName: "\${{ inputs.account }}", deviceList: "\${{ steps.devices.items }}" }
    devices: { toleratedFailurePercent: 0 }
    onError: continue`;
  const SAY_FAILED = `
  - id: say
    uses: log
    with:
      message: "\${{ size(steps.locate.items.filter(d, d.outcome == 'failed')) }} of \${{ size(steps.locate.items) }} to retry"`;

  it('a device action that failed part-way has its per-device results as items', async () => {
    const { s, lines } = await run(`${head('locate-fails')}${LOCATE_FAILS}${SAY_FAILED}`, {
      inputs: { account: t.account },
    });
    expect(s.status, s.error).to.equal('succeeded');
    const locate = stepOf(s, 'locate');
    expect(locate.status).to.equal('failed');
    expect(locate.devices.failed).to.be.within(1, 19);
    expect(unstepped(lines)).to.include(`${locate.devices.failed} of 20 to retry`);
  });

  describe('resumed after a crash', () => {
    const T0 = Date.UTC(2026, 10, 29, 2, 0, 0);
    const stopped = (waiting: number[]) => stoppedClock(T0, waiting);
    const later = () => skippingClock(T0 + 60_000);
    const HOLD = `
  - id: hold
    wait: 1h`;

    async function resumed(yaml: string, runId: string, account: string): Promise<ReturnType<typeof run>> {
      const pb = playbook(yaml);
      const store = memoryStore();
      const waiting: number[] = [];
      const o = { client: t.client, store, runId, inputs: { account } };
      try {
        await interruptedRun(pb, { ...o, clock: stopped(waiting) }, () => waiting.length > 0);
        // Restored, not run again: the resumed run lists and locates nothing.
        const acted = async () => {
          const { actions } = await calls(t.emu);
          return (actions['devices.list'] ?? 0) + (actions['location.locate'] ?? 0);
        };
        const before = await acted();
        const logger = captureLogger();
        const s = await runPlaybook(pb, { ...o, clock: later(), logger });
        expect(await acted(), 'calls of the resumed run').to.equal(before);
        return { s, lines: logger.lines };
      } finally {
        await store.close();
      }
    }

    it('a failed listing restored from its checkpoint: its items are still not known', async () => {
      const { s } = await resumed(
        `${head('resume-failed-listing')}${FAILED_LISTING}${HOLD}
  - id: say
    uses: log
    with: { message: "found \${{ size(steps.devices.items) }}" }
`,
        'r-listing',
        NO_SUCH_ACCOUNT,
      );
      expect(stepOf(s, 'devices').status).to.equal('failed');
      expect(stepOf(s, 'say').status).to.equal('failed');
      expect(stepOf(s, 'say').error).to.match(UNKNOWN);
    });

    it('a device action that failed part-way: its per-device results, from the ledger', async () => {
      const { s, lines } = await resumed(
        `${head('resume-locate-fails')}${LOCATE_FAILS}${HOLD}${SAY_FAILED}`,
        'r-locate',
        t.account,
      );
      expect(s.status, s.error).to.equal('succeeded');
      const locate = stepOf(s, 'locate');
      expect(locate.status).to.equal('failed');
      expect(locate.devices.failed).to.be.within(1, 19);
      expect(unstepped(lines)).to.include(`${locate.devices.failed} of 20 to retry`);
    });
  });
});
