/**
 * A step's per-device results as ledger groups (devices.ts), built as they come: whole groups from a request
 * the service confirmed or a report page, single devices from a callback. No map by device: a step of a million
 * devices costs its groups, not a million lookups. Each device is in one group, but for the devices a
 * per-device policy sends again (`resend`): their newer result replaces the older when the results are read.
 */
import type { DeviceGroup, DeviceResult } from '../store/store.js';
import { sameResult } from './devices.js';

export class DeviceResults {
  private list: DeviceGroup[] = [];
  /** Whether the last group was made here by addOne (others may share their lists with a device set). */
  private ownLast = false;
  /** The devices sent again: the groups that held them, and where the groups of their newer results begin. */
  private resent?: { groups: number[]; from: number };

  /** Adds groups of devices that have no result yet, or that were sent again. */
  add(groups: readonly DeviceGroup[]): void {
    for (const g of groups) if (g.ids.length) this.list.push(g);
    this.ownLast = false;
  }

  /** Adds one device's result: to the last group when it got the same result. */
  addOne(r: DeviceResult): void {
    const last = this.list[this.list.length - 1];
    if (this.ownLast && last && !last.data && r.data === undefined && sameResult(last, r)) {
      last.ids.push(r.deviceId);
      return;
    }
    this.ownLast = true;
    const { deviceId, data, ...result } = r;
    this.list.push(
      data === undefined ? { ids: [deviceId], ...result } : { ids: [deviceId], data: [data], ...result },
    );
  }

  get empty(): boolean {
    return this.list.length === 0;
  }

  /** The ids of the devices whose result `pick` selects, which are about to be sent again. */
  resend(pick: (g: DeviceGroup) => boolean): Set<string> {
    this.settle();
    const ids = new Set<string>();
    const groups: number[] = [];
    this.list.forEach((g, i) => {
      if (!pick(g)) return;
      groups.push(i);
      for (const id of g.ids) ids.add(id);
    });
    if (ids.size) this.resent = { groups, from: this.list.length };
    return ids;
  }

  /** The results with `pick`'s groups made `skipped`; returns those groups. */
  skip(pick: (g: DeviceGroup) => boolean): DeviceGroup[] {
    this.settle();
    const skipped: DeviceGroup[] = [];
    this.list = this.list.map((g) => {
      if (!pick(g)) return g;
      const s = { ...g, outcome: 'skipped' as const };
      skipped.push(s);
      return s;
    });
    return skipped;
  }

  /**
   * The attempts of the latest result of each of `ids` that has one. Read before the devices sent again have their
   * newer results (not settled: that would forget which groups those replace); the later group's counts.
   */
  attemptsOf(ids: ReadonlySet<string>): Map<string, number> {
    const out = new Map<string, number>();
    for (const g of this.list) for (const id of g.ids) if (ids.has(id)) out.set(id, g.attempts);
    return out;
  }

  /**
   * Every result so far, in the order they came, with those a newer result of a device sent again replaces: what
   * the ledger holds of the step, older results before newer ones. Not settled, and no later result joins them.
   */
  history(): readonly DeviceGroup[] {
    this.ownLast = false;
    return this.list;
  }

  /** Every device once, with its latest result. */
  groups(): DeviceGroup[] {
    this.settle();
    return this.list;
  }

  /** Drops from the groups that held the devices sent again those that have a newer result. */
  private settle(): void {
    const r = this.resent;
    if (!r) return;
    this.resent = undefined;
    const newer = new Set<string>();
    for (let i = r.from; i < this.list.length; i++)
      for (const id of (this.list[i] as DeviceGroup).ids) newer.add(id);
    if (!newer.size) return;
    const drop = new Set<number>();
    for (const i of r.groups) {
      const g = this.list[i] as DeviceGroup;
      const keep = g.ids.map((id) => !newer.has(id));
      if (keep.every(Boolean)) continue;
      const ids = g.ids.filter((_, j) => keep[j]);
      if (!ids.length) drop.add(i);
      else this.list[i] = g.data ? { ...g, ids, data: g.data.filter((_, j) => keep[j]) } : { ...g, ids };
    }
    if (drop.size) this.list = this.list.filter((_, i) => !drop.has(i));
  }
}
