/**
 * A NUL (U+0000) in what the service answered, where the runner keeps what it says: a request's `requestId`, a
 * location report's `txid`, a location's `msid`, `time` or error type. The SQLite store kept the NUL, the
 * PostgreSQL store U+FFFD in its place: the two stores recorded different things, and a request id kept so
 * matched no callback. The answer is now refused where it comes in, with the action, the field and the NUL
 * named, the same on both stores, and nothing of it kept. Devices whose request the service accepted before a
 * NUL in its request id are read back as an answer without a request id is (those changed succeed), and the
 * others are `unconfirmed` with `MALFORMED ANSWER`.
 *
 * The real emulator does the work; a proxy in front of it puts the NUL in its answer (test/helpers).
 */
import { expect } from 'chai';
import type { RunSummary } from '../../src/store/store.js';
import { forEachBackend } from '../store/backends.js';
import { accountDevices, calls, imei, imeiList, setFaults, suspendYaml, type Json } from './helpers.js';
import { behindRewritingProxy } from './proxied.js';

const NUL = /NUL character \(U\+0000\)/;

forEachBackend('a NUL in what the service answered', (b) => {
  const w = behindRewritingProxy(() => b.open());

  /** What the store kept of the run, with neither a NUL nor U+FFFD in it: nothing of the answer was kept. */
  async function keptNothingOfIt(s: RunSummary): Promise<void> {
    const unfit: string[] = [];
    JSON.stringify(
      [await w.store.deviceResults(s.runId), [...(await w.store.loadSteps(s.runId)).entries()]],
      (_, v: unknown) => {
        if (typeof v === 'string' && /[\0\ufffd]/.test(v)) unfit.push(v);
        return v;
      },
    );
    expect(unfit).to.deep.equal([]);
  }
  const failedWith = (s: RunSummary, action: string, field: string) => {
    expect(s.status).to.equal('failed');
    const error = s.steps[0]?.error ?? '';
    expect(error).to.match(NUL);
    expect(error).to.include(`${action}: the service's answer`);
    expect(error).to.include(field);
  };

  it('a request id of a device-state action: read back, the others unconfirmed, sent once', async () => {
    // The carrier never carries it out for the third device: still active when the state is read.
    await setFaults(w.emu, { neverFinishDevices: [w.active[2]!] });
    w.rewrite = (method, path, body) =>
      path.endsWith('/devices/actions/suspend') ? { ...(body as Json), requestId: 'r\0x' } : undefined;
    const s = await w.run(
      suspendYaml('nul-answer', w.account, w.active, 'confirm: { timeout: 2s, pollInterval: 100ms }'),
    );
    failedWith(s, 'devices.suspend', 'requestId');
    expect(s.steps[0]?.status).to.equal('failed');
    expect(s.steps[0]?.error).to.include("devices.suspend: the service's answer is refused");
    expect(await w.ledger(s.runId)).to.deep.equal([
      [w.active[0], 'succeeded', undefined, undefined],
      [w.active[1], 'succeeded', undefined, undefined],
      [w.active[2], 'unconfirmed', 'MALFORMED ANSWER', undefined],
    ]);
    expect(s.steps[0]?.devices.byError).to.deep.equal({ 'MALFORMED ANSWER': 1 });
    expect((await calls(w.emu)).actions['devices.suspend']).to.equal(1);
    await keptNothingOfIt(s);
  });

  it('a request id of an SMS: its devices unconfirmed, without it', async () => {
    w.rewrite = (method, path, body) =>
      method === 'POST' && path.endsWith('/m2m/v1/sms')
        ? { ...(body as Json), requestId: 'r\0x' }
        : undefined;
    const s = await w.runStep(`    uses: sms.send
    with: { accountName: "\${{ inputs.account }}", deviceIds: ${imeiList(w.active.slice(0, 2))}, smsMessage: hello }`);
    failedWith(s, 'sms.send', 'requestId');
    expect(await w.ledger(s.runId)).to.deep.equal([
      [w.active[0], 'unconfirmed', 'MALFORMED ANSWER', undefined],
      [w.active[1], 'unconfirmed', 'MALFORMED ANSWER', undefined],
    ]);
    await keptNothingOfIt(s);
  });

  it("a location report's txid: refused before it is checkpointed", async () => {
    w.rewrite = (method, path, body) => {
      if (method !== 'POST' || !path.endsWith('/loc/v1/locationreports')) return undefined;
      // One report a batch: the client gathers them as `reports`.
      return { ...(body as Json), txid: `${String((body as Json).txid)}\0` };
    };
    const s = await w.runStep(`    uses: location.createReport
    with: { accountName: "\${{ inputs.account }}", deviceList: ${imeiList(w.active)}, cacheMode: "0" }`);
    failedWith(s, 'location.createReport', 'txid');
    expect(await w.ledger(s.runId)).to.deep.equal([]);
    await keptNothingOfIt(s);
  });

  it("a location report's msid: refused, its page not recorded", async () => {
    w.rewrite = (method, path, body) => {
      if (!/\/report\/[^/]+\/index\//.test(path)) return undefined;
      const b = body as { devLocationList: Json[] };
      const [first, ...rest] = b.devLocationList;
      return { ...b, devLocationList: [{ ...first, msid: `${String(first?.msid)}\0` }, ...rest] };
    };
    const s = await w.runStep(`    uses: location.createReport
    with: { accountName: "\${{ inputs.account }}", deviceList: ${imeiList(w.active)}, cacheMode: "0" }
    wait: { for: completion, timeout: 10m, pollInterval: 1s }`);
    failedWith(s, 'location.getReport', 'msid');
    expect(await w.ledger(s.runId)).to.deep.equal([]);
    await keptNothingOfIt(s);
  });

  /** Locate answers whose first entry `entry` makes. */
  const locateAnswer = (entry: (msid: unknown) => Json) => (method: string, path: string, body: unknown) => {
    if (!path.endsWith('/loc/v1/locations')) return undefined;
    const [first, ...rest] = body as Json[];
    return [entry(first?.msid), ...rest];
  };
  const LOCATE = () => `    uses: location.locate
    with: { accountName: "\${{ inputs.account }}", deviceList: ${imeiList(w.active)}, cacheMode: "0" }`;

  it("a location's time: refused, none of the answer recorded", async () => {
    w.rewrite = locateAnswer((msid) => ({
      msid,
      pd: { x: '40.7', y: '-74.0', time: '2026\x0001' },
      error: {},
    }));
    const s = await w.runStep(LOCATE());
    failedWith(s, 'location.locate', 'time');
    expect(await w.ledger(s.runId)).to.deep.equal([]);
    await keptNothingOfIt(s);
  });

  it("a location's error type: refused, none of the answer recorded", async () => {
    w.rewrite = locateAnswer((msid) => ({ msid, pd: {}, error: { type: 'ABSENT\0SUBSCRIBER' } }));
    const s = await w.runStep(LOCATE());
    failedWith(s, 'location.locate', 'error/type');
    expect(await w.ledger(s.runId)).to.deep.equal([]);
    await keptNothingOfIt(s);
  });
});

/**
 * A NUL in a listed device's identifier (or its kind), in the listing's third page: the listing's items
 * (`{ id, kind }`) go to the store page by page, and a location report takes them from there (streamed), or a
 * step takes them from memory. The items bypassed the check the other answers get: the listing succeeded with
 * the identifier in its stored items, and the step that took them failed with an input error of its own (an
 * IMEI's format, or the NUL refused as that step's input, FB_INPUT), naming neither the listing nor the
 * service's answer. The listing's answer is now refused as the others are, its field named, and none of its
 * items is kept.
 */
forEachBackend('a NUL in a listed device', (b) => {
  const w = behindRewritingProxy(() => b.open());
  /** The IMEI given a NUL: the second device of the third page. */
  let nulImei: string;
  /** Where the NUL goes: the IMEI's `id`, or its `kind`. */
  let member: 'id' | 'kind';

  beforeEach(async () => {
    const listed = (await accountDevices(w.emu, w.account)).filter((d) => d.state === 'active').map(imei);
    expect(listed.length).to.be.above(12);
    nulImei = listed[11]!;
    member = 'id';
    w.rewrite = (_method, path, body) => {
      if (!path.endsWith('/devices/actions/list')) return undefined;
      const page = body as { devices: { deviceIds: Json[] }[] };
      return {
        ...page,
        devices: page.devices.map((d) => ({
          ...d,
          deviceIds: d.deviceIds.map((x) =>
            x.id === nulImei ? { ...x, [member]: `${String(x[member])}\0` } : x,
          ),
        })),
      };
    };
  });

  const run = (uses: string, items = 'items: { kind: imei }') =>
    w.run(
      `
version: 1
name: nul-listing
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}", currentState: active, maxNumberOfDevices: 5 }
    ${items}
  - id: it
    uses: ${uses}
    with: { accountName: "\${{ inputs.account }}", deviceList: "\${{ steps.devices.items }}", cacheMode: "0" }
`,
      { inputs: { account: w.account } },
    );

  /** The run failed at the listing, for the NUL of `value` in `field`, and kept nothing of the listing. */
  async function refusedListing(s: RunSummary, field: string, value: string): Promise<void> {
    expect(s.status).to.equal('failed');
    expect(s.steps.map((x) => [x.id, x.status])).to.deep.equal([['devices', 'failed']]);
    const error = s.steps[0]?.error ?? '';
    expect(error).to.match(NUL);
    expect(error).to.include("devices.list: the service's answer is refused");
    expect(error).to.include(`devices/11/deviceIds/0/${field} ${JSON.stringify(value)}`);
    expect(await w.store.deviceResults(s.runId)).to.deep.equal([]);
    expect(await b.query(w.store, 'SELECT seq FROM step_items')).to.deep.equal([]);
    const c = await calls(w.emu);
    expect(c.actions['location.createReport'] ?? 0).to.equal(0);
    expect(c.actions['location.locate'] ?? 0).to.equal(0);
  }

  it('streamed to a location report: refused, no item kept, nothing sent', async () => {
    await refusedListing(await run('location.createReport'), 'id', `${nulImei}\0`);
  });

  it('held in memory for the next step: refused as an answer, not as that step input', async () => {
    await refusedListing(await run('location.locate'), 'id', `${nulImei}\0`);
  });

  it('in the kind of the identifier an item takes: refused', async () => {
    member = 'kind';
    await refusedListing(await run('location.locate', ''), 'kind', 'imei\0');
  });
});
