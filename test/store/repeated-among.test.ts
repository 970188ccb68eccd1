/**
 * The pages of a running run learn which of their devices have several results in a step (Store.repeatedAmong)
 * from the entries whose range of ids holds one of those devices (id-range.ts), on every backend: a page reads a
 * few entries, not the run. Before, SQLite indexed the run at its first page (1.1-1.4 s for a running suspend of
 * a million devices, again after a minute without a page), and PostgreSQL read every entry of the run at each
 * lookup (0.4 s, and up to 1.7 s for a page).
 */
import { expect } from 'chai';
import type { Store } from '../../src/store/store.js';
import { forEachBackend } from './backends.js';
import { group, imei, imeis, run } from './fixtures.js';

const AT = '2026-11-29T10:00:30.000Z';
const key = (step: string, id: string) => `${step}\0${id}`;
/** Ids whose order differs between UTF-16 (JavaScript) and UTF-8 (the stores). */
const ODD = ['dev-\u{1F600}', 'dev-\uE000', 'dev-a'];

forEachBackend('devices with several results in a running run', (b) => {
  let store: Store;
  /** The seq of each entry of run r, in order. */
  const seqs = async () =>
    (
      await b.query<{ seq: number | string }>(store, "SELECT seq FROM ledger WHERE run_id = 'r' ORDER BY seq")
    ).map((r) => Number(r.seq));

  beforeEach(async () => {
    store = await b.open();
    store.createRun(run('r'));
    // Devices 0-99 accepted, then 0-49 confirmed; device 0 of another step once.
    store.recordDevices('r', 'suspend', [group(imeis(0, 100), { outcome: 'accepted' })], AT);
    store.recordDevices('r', 'suspend', [group(imeis(0, 50))], AT);
    store.recordDevices('r', 'notify', [group([imei(0)])], AT);
    await store.durable();
  });

  it('follows the entries written between lookups', async () => {
    const [, confirmed] = await seqs();
    const asked = [
      key('suspend', imei(0)),
      key('suspend', imei(49)),
      key('suspend', imei(50)),
      key('notify', imei(0)),
    ];
    expect(new Map(await store.repeatedAmong('r', asked))).to.deep.equal(
      new Map([
        [key('suspend', imei(0)), confirmed],
        [key('suspend', imei(49)), confirmed],
      ]),
    );
    // Device 50 confirmed now, device 0 retried and failed: both in the next lookup, with the entry that counts.
    store.recordDevices('r', 'suspend', [group([imei(50)])], AT);
    store.recordDevices('r', 'suspend', [group([imei(0)], { outcome: 'failed' })], AT);
    store.recordDevices('r', 'notify', [group([imei(0)])], AT);
    await store.durable();
    const [, , , late50, retried0, notified] = await seqs();
    expect(new Map(await store.repeatedAmong('r', asked))).to.deep.equal(
      new Map([
        [key('suspend', imei(0)), retried0],
        [key('suspend', imei(49)), confirmed],
        [key('suspend', imei(50)), late50],
        [key('notify', imei(0)), notified],
      ]),
    );
  });

  it("reads only the entries whose ids' range holds an asked device", async () => {
    const [accepted, confirmed] = await seqs();
    // The accepted entry's range no longer holds device 0: a lookup that read every entry would still find it twice.
    await b.query(
      store,
      `UPDATE ledger SET min_id = '0', max_id = '1' WHERE seq = ${accepted} RETURNING seq`,
    );
    const asked = [key('suspend', imei(0)), key('suspend', imei(49))];
    expect(new Map(await store.repeatedAmong('r', asked))).to.deep.equal(new Map());
    // Written with the range that holds it, it is there again.
    store.recordDevices('r', 'suspend', [group([imei(49)], { outcome: 'failed' })], AT);
    await store.durable();
    const later = (await seqs()).at(-1);
    expect(new Map(await store.repeatedAmong('r', asked))).to.deep.equal(
      new Map([[key('suspend', imei(49)), later]]),
    );
    expect(confirmed).to.be.below(later as number);
  });

  it('finds ids whose order differs between UTF-16 and the stores', async () => {
    store.recordDevices('r', 'odd', [group(ODD, { outcome: 'accepted' })], AT);
    store.recordDevices('r', 'odd', [group(ODD.slice(0, 2))], AT);
    store.recordDevices('r', 'odd', [group(ODD.slice(2))], AT);
    await store.durable();
    const [, , , , first, second] = await seqs();
    expect(
      new Map(
        await store.repeatedAmong(
          'r',
          ODD.map((id) => key('odd', id)),
        ),
      ),
    ).to.deep.equal(
      new Map([
        [key('odd', ODD[0] as string), first],
        [key('odd', ODD[1] as string), first],
        [key('odd', ODD[2] as string), second],
      ]),
    );
  });
});
