/**
 * Issue 15, point 5: unauthenticated callbacks were expensive. Each one's body is read and parsed before its
 * credentials can be checked, and 52-59 unauthenticated 0.93 MB bodies a second saturated the daemon (RSS 88 to
 * 354 MB, acknowledgements up to 3.8 s). Now an address whose callbacks keep failing is answered 429 with
 * Retry-After before its body is read, and the bytes read from senders not yet authenticated are bounded.
 *
 * Against a real daemon (`fleetbook serve`, the built binary): a flooder bound to 127.0.0.2 posts ~1 MB bodies
 * with wrong credentials on 32 connections while the service, from 127.0.0.1, posts callbacks; every one of
 * those is acknowledged and stored, the flooder gets 429s, no flood body is read once its budget is spent, and
 * the daemon's memory stays bounded. The test counts what is read rather than timing the acknowledgements: how
 * long those take is the machine's, and the body reads were what made them slow.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { Agent, request } from 'undici';
import { FailureBudget, PendingBytes, addressKey } from '../../src/daemon/admission.js';
import { DaemonWorld, inboxRequestIds } from '../helpers/daemon.js';
import { LISTENER_PASSWORD, LISTENER_USER, carrierCallback } from '../helpers/listener.js';

/** Resident memory of a process, and its peak so far, in bytes (Linux: /proc; elsewhere undefined). */
function memory(pid: number): { rss: number; peak: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

describe('a flood of unauthenticated callbacks (issue 15, point 5)', function () {
  this.timeout(120_000);

  describe('the failure budget and the bound of bytes read unauthenticated', () => {
    it('refuses an address once it has had `limit` failures in a window, until the window ends', () => {
      let now = 1_000_000;
      const budget = new FailureBudget(3, 60_000, () => now);
      for (let i = 0; i < 3; i++) {
        expect(budget.blockedFor('10.0.0.1'), `after ${i} failures`).to.equal(0);
        budget.fail('10.0.0.1');
      }
      expect(budget.blockedFor('10.0.0.1')).to.equal(60);
      expect(budget.blockedFor('10.0.0.2'), 'another address').to.equal(0);
      now += 59_500;
      expect(budget.blockedFor('10.0.0.1')).to.equal(1);
      now += 500;
      expect(budget.blockedFor('10.0.0.1'), 'once the window ended').to.equal(0);
      budget.fail('10.0.0.1');
      expect(budget.blockedFor('10.0.0.1'), 'one failure of a new window').to.equal(0);
      expect(new FailureBudget(0, 60_000).blockedFor('10.0.0.1'), 'limit 0: off').to.equal(0);
    });

    it('remembers at most maxAddresses addresses', () => {
      const now = 1_000_000;
      const budget = new FailureBudget(1, 60_000, () => now, 100);
      for (let i = 0; i < 1000; i++) budget.fail(`10.0.${i >> 8}.${i & 255}`);
      expect((budget as unknown as { windows: Map<string, unknown> }).windows.size).to.equal(100);
      expect(budget.blockedFor('10.0.3.231'), 'the newest is remembered').to.equal(60);
    });

    it('admits bytes up to the total and to each address share, and frees them when given back', () => {
      const pending = new PendingBytes(10, 4);
      expect(pending.take('a', 4)).to.equal(true);
      expect(pending.take('a', 1), 'past the share of a').to.equal(false);
      expect(pending.take('b', 4)).to.equal(true);
      expect(pending.take('c', 3), 'past the total').to.equal(false);
      expect(pending.take('c', 2)).to.equal(true);
      expect(pending.take('d', 0), 'no body').to.equal(true);
      pending.give('a', 4);
      expect(pending.used).to.equal(6);
      expect(pending.take('c', 2)).to.equal(true);
    });

    it('counts IPv4 addresses alone and IPv6 ones by /64', () => {
      expect(addressKey('127.0.0.2')).to.equal('127.0.0.2');
      expect(addressKey('::ffff:192.0.2.7')).to.equal('192.0.2.7');
      expect(addressKey('2001:db8:1:2:3:4:5:6')).to.equal(addressKey('2001:db8:1:2:ffff::1'));
      expect(addressKey('2001:db8:1:2::1')).to.not.equal(addressKey('2001:db8:1:3::1'));
    });
  });

  describe('a daemon (fleetbook serve)', () => {
    let world: DaemonWorld;
    const agents: Agent[] = [];

    before(async () => {
      world = await DaemonWorld.create('flood', { user: LISTENER_USER, password: LISTENER_PASSWORD });
    });
    after(async () => {
      await Promise.all(agents.map((a) => a.close()));
      await world?.close();
    });

    it('answers the flooding address 429 and keeps acknowledging and storing the service callbacks', async () => {
      const state = world.state();
      // The budget's window outlasts the test however slow the machine: the flooder's failures are not forgiven
      // halfway through (the window itself is the FailureBudget unit test's).
      const daemon = await world.start(
        'flooded daemon',
        join(import.meta.dirname, '..', 'fixtures', 'listener-hardening'),
        { env: { FLEETBOOK_CALLBACK_FAILURE_WINDOW: '1h' } },
      );
      const url = `${daemon.url}/callbacks/CarrierService`;
      const pid = daemon.proc.pid ?? 0;
      const flooder = new Agent({ localAddress: '127.0.0.2', connections: 32 });
      const service = new Agent({ localAddress: '127.0.0.1', connections: 8 });
      agents.push(flooder, service);
      const headers = { 'content-type': 'application/json' };
      const before = memory(pid);

      // The flood: 0.93 MB bodies with wrong credentials, as fast as the daemon answers, on 32 connections. Each
      // connection posts one at a time: once one has been answered 429, whatever it sent before is answered.
      const junk = JSON.stringify(
        carrierCallback('flood', { password: 'guess', padding: 'x'.repeat(930_000) }),
      );
      const flood = new Map<string, number>();
      /** The flood's answers while the service posts. */
      const duringService = new Map<string, number>();
      let servicePosting = false;
      const retryAfters = new Set<string>();
      let flooding = true;
      let throttledLoops = 0;
      let budgetSpent = () => {};
      const spent = new Promise<void>((resolve) => (budgetSpent = resolve));
      const flooders = Array.from({ length: 32 }, async () => {
        let throttled = false;
        while (flooding) {
          let key: string;
          try {
            const r = await request(url, { method: 'POST', headers, body: junk, dispatcher: flooder });
            await r.body.dump();
            key = String(r.statusCode);
            if (r.statusCode === 429) retryAfters.add(String(r.headers['retry-after']));
          } catch (e) {
            key = (e as { code?: string }).code ?? (e as Error).message;
          }
          flood.set(key, (flood.get(key) ?? 0) + 1);
          if (servicePosting) duringService.set(key, (duringService.get(key) ?? 0) + 1);
          if (key === '429' && !throttled) {
            throttled = true;
            if (++throttledLoops === 32) budgetSpent();
          }
          // Without a budget (the daemon before the fix) no 429 ever comes: past the most the budget allows, the
          // service posts all the same, and the checks below say what the flood had.
          if ((flood.get('401') ?? 0) > 54) budgetSpent();
        }
      });

      // The service: 200 callbacks, 8 at a time, from 127.0.0.1, once every flooding connection has been
      // refused, and on until the flood has had 32 answers meanwhile, so that the two overlap however fast or
      // slow the machine is.
      await spent;
      servicePosting = true;
      const floodAnswers = () => [...duringService.values()].reduce((n, v) => n + v, 0);
      const answers = new Map<string, { status: number; body: string }>();
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < 200 || floodAnswers() < 32) {
            const id = `service-${next++}`;
            const r = await request(url, {
              method: 'POST',
              headers,
              body: JSON.stringify(carrierCallback(id)),
              dispatcher: service,
            });
            answers.set(id, { status: r.statusCode, body: await r.body.text() });
          }
        }),
      );
      servicePosting = false;
      flooding = false;
      await Promise.all(flooders);
      const after = memory(pid);

      const floodText = JSON.stringify(Object.fromEntries(flood));
      const duringText = JSON.stringify(Object.fromEntries(duringService));
      const refused = [...answers].filter(([, a]) => a.status !== 200 || a.body !== '{"status":"stored"}');
      expect(
        refused.map(([id, a]) => `${id}: ${a.status} ${a.body}`),
        'service callbacks not acknowledged',
      ).to.deep.equal([]);
      // What the slow acknowledgements came from: every flood body read and parsed, beside the service's.
      // While the service posted, the flood went on, and not one of its bodies was read to be refused: each was
      // answered before its body was read (429, or 503 past the bound of bytes), or cut as it was sent.
      expect(
        duringService.get('401') ?? 0,
        `flood bodies read while the service posted, ${duringText}`,
      ).to.equal(0);
      expect(
        duringService.get('429') ?? 0,
        `flood answers while the service posted, ${duringText}`,
      ).to.be.above(0);

      const stored = new Set(inboxRequestIds(state));
      expect(
        [...answers.keys()].filter((id) => !stored.has(id)),
        'acknowledged but not stored',
      ).to.deep.equal([]);
      expect(stored.has('flood'), 'a flood message stored').to.equal(false);

      // The flooder had its budget of failures (50 a window), then 429s. Its bodies are read 4 MB at a time (4
      // of them): those already admitted when the 50th failure is counted fail too.
      expect(flood.get('429') ?? 0, `flood answers ${floodText}`).to.be.greaterThan(0);
      expect(flood.get('401') ?? 0, `flood answers ${floodText}`).to.be.within(50, 54);
      for (const r of retryAfters) expect(Number(r), 'Retry-After of a 429').to.be.within(1, 3600);

      // The budget's 50-54 refused bodies are read and parsed by design, about 3.7 MB each (the chunks, their
      // concatenation, the string, the parsed padding): some 200 MB allocated, of which the peak holds what V8 has
      // not yet collected. Measured here 85-155 MB (alone and beside other tests' daemons, with coverage on), flat
      // through a flood eight seconds longer; the issue measured 266 MB. The bound is what the budget allocates.
      if (before && after) {
        const growth = after.peak - before.rss;
        expect(growth, `peak RSS growth (bytes), ${before.rss} before`).to.be.below(210 * 1024 * 1024);
      }

      const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
      const throttled = /^fleetbook_callbacks_rejected_total\{reason="throttled"\} (\d+)$/m.exec(
        metrics,
      )?.[1];
      // A 429 closes the connection: a flooder still sending its body may see the socket close instead of the
      // answer. So the count is at least the 429s seen, and at most those plus the requests that ended so.
      const seen = flood.get('429') ?? 0;
      const cut = [...flood].filter(([k]) => !/^\d+$/.test(k)).reduce((n, [, v]) => n + v, 0);
      expect(Number(throttled), `rejections counted as throttled, flood ${floodText}`)
        .to.be.at.least(seen)
        .and.at.most(seen + cut);
    });
  });
});
