/**
 * `firesKey` (src/playbook/cron.ts), by which `validate` finds two schedules of a playbook that fire at the same
 * times though written differently (`schedule-duplicate`): the forms it takes as one, the ones it keeps apart,
 * and, over the cron corpus (test/fixtures/cron/corpus.json), that every two valid expressions it takes as one
 * fire at the same instants, in UTC and in a zone with DST.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { checkCron, compileCron, firesKey } from '../../src/playbook/cron.js';

const FROM = Date.parse('2026-01-01T00:00:00.000Z');

/** The fires after FROM, in ms, as they come. */
function* firing(expression: string, timezone: string): Generator<number> {
  const c = compileCron(expression, timezone);
  if (!c.ok) throw new Error(c.problem);
  for (let t = c.schedule.next(FROM); t !== undefined; t = c.schedule.next(t)) yield t;
}

/** The first `n` fires after FROM, in ms. */
function fires(expression: string, timezone: string, n: number): number[] {
  const out: number[] = [];
  for (const t of firing(expression, timezone)) {
    if (out.length === n) break;
    out.push(t);
  }
  return out;
}

/**
 * Whether the first `n` fires of two schedules differ: compared as they come, so that two schedules apart from
 * their first fire are not each worked out `n` times.
 */
function differWithin(a: [string, string], b: [string, string], n: number): boolean {
  const x = firing(...a);
  const y = firing(...b);
  for (let i = 0; i < n; i++) {
    const p = x.next();
    const q = y.next();
    if (p.done || q.done) return p.done !== q.done;
    if (p.value !== q.value) return true;
  }
  return false;
}

describe('schedules that fire at the same times (firesKey)', () => {
  const same: [string, string, string?][] = [
    ['@daily', '0 0 * * *'],
    ['@midnight', '0 0 ? * *'],
    ['* * * * 7', '* * * * 0'],
    ['* * * * 7', '0-59 * 1-31 JAN-DEC Sun'],
    ['0 0 * * MON-FRI', '0 0 * * 1-5'],
    ['@hourly', '0 0 * * * *'],
    ['@weekly', '0 0 * * sunday'],
    ['*/15 * * * *', '0,15,30,45 * * * *'],
    ['0 0 9 * * SUN', '0 9 * * 0', 'Europe/Paris'],
    ['@daily', '0 0 * * *', 'Etc/UTC'],
  ];
  for (const [a, b, zone = 'UTC'] of same)
    it(`${a} and ${b} (${zone}) are one`, () => {
      expect(firesKey(a, zone)).to.be.a('string');
      expect(firesKey(a, zone)).to.equal(firesKey(b, zone));
      expect(fires(a, zone, 50)).to.deep.equal(fires(b, zone, 50));
    });

  it('takes a time zone by any of its names', () => {
    expect(firesKey('@daily', 'Etc/UTC')).to.equal(firesKey('@daily', 'UTC'));
    expect(firesKey('@daily', 'US/Eastern')).to.equal(firesKey('@daily', 'America/New_York'));
  });

  const apart: [string, string, string, string][] = [
    ['@daily', 'UTC', '@daily', 'America/New_York'],
    ['0 0 L * *', 'UTC', '0 0 31 * *', 'UTC'],
    ['0 0 * * 1-5', 'UTC', '0 0 * * 1-6', 'UTC'],
    // A fixed time fires at the end of a DST gap; a wildcard one does not fire in it.
    ['30 0-23 * * *', 'America/New_York', '30 * * * *', 'America/New_York'],
  ];
  for (const [a, za, b, zb] of apart)
    it(`${a} (${za}) and ${b} (${zb}) are not`, () => {
      expect(firesKey(a, za)).to.not.equal(firesKey(b, zb));
      expect(differWithin([a, za], [b, zb], 9000), 'the first 9,000 fires differ').to.equal(true);
    });

  it('has no key for an expression that does not compile', () => {
    expect(firesKey('0 0 32 * *')).to.equal(undefined);
  });

  it('over the cron corpus, any two valid expressions it takes as one fire alike', function () {
    this.timeout(120_000);
    const corpus = JSON.parse(
      readFileSync(new URL('../fixtures/cron/corpus.json', import.meta.url), 'utf8'),
    ) as { expressions: { cron: string }[] };
    let compared = 0;
    for (const zone of ['UTC', 'America/New_York']) {
      // The fires of the first expression of a key, worked out once however many of the corpus share the key.
      const firstFires = new Map<string, number[]>();
      const byKey = new Map<string, string>();
      for (const { cron } of corpus.expressions) {
        if (!checkCron(cron, zone).ok) continue;
        const key = firesKey(cron, zone) as string;
        const first = byKey.get(key);
        if (first === undefined) byKey.set(key, cron);
        else if (first !== cron) {
          compared++;
          if (!firstFires.has(first)) firstFires.set(first, fires(first, zone, 200));
          expect(fires(cron, zone, 200), `${cron} and ${first} in ${zone}`).to.deep.equal(
            firstFires.get(first),
          );
        }
      }
    }
    expect(compared, 'pairs of the corpus taken as one').to.be.greaterThan(10);
  });
});
