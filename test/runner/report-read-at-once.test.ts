/**
 * A cacheMode 0 report's result is available at once (public-api-facts.md), though its creation answers QUEUED
 * as every report's does: a report step reads its status at once rather than after a poll interval (5 s by
 * default), over a list in memory and over a listing's items streamed from the store alike. A cacheMode 1 or 2
 * report keeps its pacing: the first status read comes after an interval. The run's clock only records its
 * waits (and moves the emulator's simulated time by them), so the test reads what was waited for and what was
 * asked, in order, and never waits itself.
 */
import { expect } from 'chai';
import type { Clock } from '../../src/clock.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import { accountDevices, imei, onEmulator, playbook, watchAnswers } from './helpers.js';

const INTERVAL = 60_000;

/** What happened, in order: `wait <ms>` for each wait of the run's clock, `<action path>` for each answer. */
type Seen = { status: number; method: string; path: string }[];

/** A clock whose waits take no time: each is noted in `seen` and moves the emulator's clock as far. */
function recordingClock(emu: Emulator, seen: Seen): Clock {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    timer: (ms, fire) => {
      const t = setTimeout(fire, ms);
      return () => clearTimeout(t);
    },
    sleep: (ms, signal) => {
      signal?.throwIfAborted();
      seen.push({ status: 0, method: 'WAIT', path: String(ms) });
      offset += ms;
      emu.advance(ms / 1000);
      return Promise.resolve();
    },
  };
}

/** The requests of the location report's lifecycle, and the waits, as short names in order. */
const lifecycle = (seen: Seen): string[] =>
  seen.flatMap((a) => {
    if (a.method === 'WAIT') return [`wait ${a.path}`];
    if (a.method === 'POST' && a.path.endsWith('/loc/v1/locationreports')) return ['create'];
    if (/\/report\/[^/]+\/status$/.test(a.path)) return ['status'];
    if (/\/report\/[^/]+\/index\/\d+$/.test(a.path)) return ['page'];
    return [];
  });

const steps = (deviceList: string, cacheMode: string, listing = '') => `version: 1
name: at-once
on: { manual: true }
inputs:
  account: { type: string }
steps:${listing}
  - id: report
    uses: location.createReport
    with: { accountName: "\${{ inputs.account }}", deviceList: ${deviceList}, cacheMode: "${cacheMode}" }
    devices:
      ignore: [SVC CACHE UNAVAILABLE, ABSENT SUBSCRIBER, SVC DEVICE LOCATION DATA UNAVAILABLE]
    wait: { for: completion, timeout: 2h }
`;

const LISTING = `
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}", currentState: active }
    items: { kind: imei }`;

describe('runner: a cacheMode 0 report is read at once', function () {
  this.timeout(60_000);
  const t = onEmulator({ devicesPerAccount: 12 });

  async function run(yaml: string): Promise<{ status: string; order: string[] }> {
    const seen = watchAnswers(t.emu.url);
    try {
      const s = await runPlaybook(playbook(yaml), {
        client: t.client,
        store: t.store,
        clock: recordingClock(t.emu, seen.answers),
        pollIntervalMs: INTERVAL,
        inputs: { account: t.account },
      });
      return { status: s.status, order: lifecycle(seen.answers) };
    } finally {
      seen.stop();
    }
  }

  const cached = async () =>
    (await accountDevices(t.emu, t.account))
      .filter((d) => d.iot && d.state === 'active' && d.hasCachedLocation)
      .slice(0, 2)
      .map((d) => ({ id: imei(d), kind: 'imei' }));

  it('reads the status of a report of devices in memory at once: no wait before it', async () => {
    const r = await run(steps(JSON.stringify(await cached()), '0'));
    expect(r.status).to.equal('succeeded');
    expect(r.order).to.deep.equal(['create', 'status', 'page']);
  });

  it('reads the status of a report streamed from a listing at once', async () => {
    const r = await run(steps('"${{ steps.devices.items }}"', '0', LISTING));
    expect(r.status).to.equal('succeeded');
    expect(r.order).to.deep.equal(['create', 'status', 'page']);
  });

  it('keeps the pacing of a cacheMode 1 report: a wait before each status read', async () => {
    const r = await run(steps(JSON.stringify(await cached()), '1'));
    expect(r.status).to.equal('succeeded');
    // One device: 3 minutes (the emulator's estimate), asked every minute.
    const wait = `wait ${INTERVAL}`;
    expect(r.order).to.deep.equal(['create', wait, 'status', wait, 'status', wait, 'status', 'page']);
  });
});
