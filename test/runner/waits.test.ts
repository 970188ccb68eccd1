/**
 * `wait` for an event correlated by `match`: from an event source (a fake one, and one fed by the emulator's
 * real Location callbacks over loopback), falling back to polling (`wait.poll`), and timing out.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { EventHub } from '../../src/runner/events.js';
import { runPlaybook, type RunOptions } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import type { RunSummary } from '../../src/store/store.js';
import {
  calls,
  captureLogger,
  clientFor,
  emulator,
  memoryStore,
  playbook,
  type Json,
  type LogLine,
} from './helpers.js';

/** An event of another shape makes a match expression throw: that is no match. */
/** The in-process hub, keeping what was emitted. */
class Events extends EventHub {
  readonly emitted: { service: string; event: unknown }[] = [];

  emit(service: string, event: unknown): void {
    this.emitted.push({ service, event });
    this.publish(service, event);
  }

  async untilWaiting(): Promise<void> {
    while (this.waiting === 0) await new Promise((r) => setTimeout(r, 5));
  }
}

describe('runner: wait for an event, with poll fallback', function () {
  this.timeout(20_000);
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let account: string;
  let lines: LogLine[];

  before(async () => {
    // 600 simulated seconds per real second: a cacheMode 1 report of 50 devices (3 minutes) takes 0.3 s.
    emu = await emulator({ devicesPerAccount: 50, timeScale: 600 });
    account = emu.defaults.accounts[0]!;
    client = clientFor(emu);
    store = memoryStore();
  });
  after(async () => {
    await store.close();
    await client.close();
    await emu.close();
  });
  beforeEach(() => {
    lines = [];
  });

  const run = (yaml: string, o: Partial<RunOptions> = {}): Promise<RunSummary> =>
    runPlaybook(playbook(yaml), { client, store, logger: captureLogger(lines), ...o });
  const logged = () => lines.map((l) => l.message);
  const output = async (s: RunSummary, id: string) =>
    ((await store.loadSteps(s.runId)).get(id) as { output?: Json } | undefined)?.output;

  it('takes the event its match selects, not the others', async () => {
    const events = new Events();
    const pending = run(
      `
version: 1
name: correlate
on: { manual: true }
steps:
  - id: pick
    set: { txid: tx-2 }
  - id: done
    wait:
      event: { service: Location, match: \${{ event.locationReportResponse.txid == vars.txid }} }
      timeout: 5s
  - id: after
    uses: log
    with: { message: "got \${{ steps.done.output.locationReportResponse.txid }} \${{ steps.done.output.requestId }}" }
`,
      { events },
    );
    await events.untilWaiting();
    const event = (txid: string, requestId: string) => ({
      requestId,
      locationReportResponse: { accountName: account, txid, status: 'COMPLETED', totalCount: 3 },
    });
    events.emit('Location', event('tx-1', 'r1'));
    events.emit('DeviceUsage', event('tx-2', 'r2'));
    expect(events.waiting, 'still waiting after events that do not match').to.equal(1);
    events.emit('Location', event('tx-2', 'r3'));
    const s = await pending;
    expect(s.status, s.error).to.equal('succeeded');
    expect(logged()).to.include('got tx-2 r3');
    expect(await output(s, 'done')).to.deep.equal(event('tx-2', 'r3'));
    expect(events.waiting, 'no waiter left behind').to.equal(0);
  });

  describe('a location report followed to completion', () => {
    let server: Server;
    let url: string;
    let events: Events;

    before(async () => {
      // The listener the emulator posts Location callbacks to; each one becomes an event.
      server = createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          events.emit('Location', JSON.parse(body) as unknown);
          res.writeHead(200).end('{}');
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`;
    });
    after(() => new Promise<void>((r) => server.close(() => r())));
    beforeEach(() => {
      events = new Events();
    });

    const REPORT = (wait: string) => `
version: 1
name: report-then-wait
on: { manual: true }
inputs:
  account: { type: string, required: true }
  url: { type: string, required: true }
steps:
  - id: listen
    uses: locationCallbacks.register
    with: { accountName: \${{ inputs.account }}, url: \${{ inputs.url }} }
  - id: devices
    uses: devices.list
    with: { accountName: \${{ inputs.account }}, currentState: active }
  - id: report
    uses: location.createReport
    with: { accountName: \${{ inputs.account }}, deviceList: \${{ steps.devices.items }}, cacheMode: "1" }
  - id: done
    wait:
${wait}
  - id: read
    uses: location.getReport
    with: { accountName: \${{ inputs.account }}, txid: \${{ steps.report.output.reports[0].txid }} }
`;
    const MATCH = `      event:
        service: Location
        match: \${{ event.locationReportResponse.txid == steps.report.output.reports[0].txid }}`;
    const POLL = `      poll:
        uses: location.getReportStatus
        with: { accountName: \${{ inputs.account }}, txid: \${{ steps.report.output.reports[0].txid }} }
        until: \${{ event.status == "COMPLETED" }}
        interval: 50ms`;

    async function statusCalls(): Promise<number> {
      return (await calls(emu)).actions['location.getReportStatus'] ?? 0;
    }

    it('by the emulator callback correlated to the report', async () => {
      const polls = await statusCalls();
      const s = await run(REPORT(`${MATCH}\n      timeout: 10s`), { events, inputs: { account, url } });
      expect(s.status, s.error).to.equal('succeeded');
      const txid = (((await output(s, 'report'))!.reports as Json[])[0] as Json).txid;
      const got = (await output(s, 'done'))!;
      expect((got.locationReportResponse as Json).txid).to.equal(txid);
      expect((got.locationReportResponse as Json).status).to.equal('COMPLETED');
      expect(await statusCalls(), 'no polling').to.equal(polls);
      // The report can be read: it is complete.
      expect((await output(s, 'read'))!.totalCount).to.equal((got.locationReportResponse as Json).totalCount);
    });

    it('by polling the report status (`until` sees the poll answer as `event`): without an event source, and with a silent one', async () => {
      for (const source of [undefined, new Events()]) {
        const polls = await statusCalls();
        const s = await run(REPORT(`${MATCH}\n      timeout: 10s\n${POLL}`), {
          ...(source ? { events: source } : {}),
          inputs: { account, url },
        });
        // Succeeded: ended by the poll's answer, not by its 10 s timeout, which would fail the step.
        expect(s.status, s.error).to.equal('succeeded');
        expect(await output(s, 'done')).to.include({ status: 'COMPLETED' });
        // It polled while the report was QUEUED and INPROGRESS: more than once.
        expect((await statusCalls()) - polls).to.be.greaterThan(1);
        expect((await output(s, 'read'))!.totalCount).to.be.greaterThan(0);
        if (source) expect(source.waiting, 'the event waiter was released').to.equal(0);
      }
      // A poll whose condition never holds ends at the timeout.
      const s = await run(
        REPORT(
          `${MATCH}\n      timeout: 300ms\n${POLL.replace('"COMPLETED"', '"COMPLETED" && event.txid == "no such report"')}`,
        ),
        {
          inputs: { account, url },
        },
      );
      expect(s.status).to.equal('failed');
      expect(s.error).to.match(
        /^step `done` failed: (timed out after 300ms|no Location event within 300ms)$/,
      );
    });

    it('fails at its timeout when no event comes, and goes no further', async () => {
      const silent = new Events();
      const s = await run(REPORT(`${MATCH}\n      timeout: 300ms`), {
        events: silent,
        inputs: { account, url },
      });
      expect(s.status).to.equal('failed');
      expect(s.error).to.equal('step `done` failed: no Location event within 300ms');
      expect(s.steps.find((x) => x.id === 'read')).to.equal(undefined);
      expect(silent.waiting, 'the event waiter was released').to.equal(0);
    });
  });

  it('without an event source or a poll, fails at once: no callback can reach the process', async () => {
    const s = await run(`
version: 1
name: nothing-comes
on: { manual: true }
steps:
  - id: done
    wait:
      event: { service: CarrierService }
      timeout: 2h
`);
    expect(s.status).to.equal('failed');
    expect(s.error).to.equal(
      'step `done` failed: no CarrierService callback can reach this run: it runs where no callback listener is (`fleetbook run`, `fleetbook test`). Run the playbook under `fleetbook serve`, or give the wait a `poll` that reads what the callback would tell',
    );
    // At once: it never began its two hours.
    expect(logged()).to.not.include('waiting');
  });
});
