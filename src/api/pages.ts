/**
 * The pages of a paged answer: where each kind keeps its items, how the next page is asked for (the largest
 * device id, a `?next=` token, the last event's time), and the whole answer made of every page's items.
 * The client's paging loop (client.ts `pagesOf`) uses these.
 */
import type { Operation } from './catalog.js';

type Json = Record<string, unknown>;

/** The members that hold the items of a page, one per kind of paged answer. */
const ITEM_MEMBERS = ['devLocationList', 'exclusion', 'devices', 'messages', 'connectionHistory'] as const;

function itemsMember(page: Json): string | undefined {
  return ITEM_MEMBERS.find((k) => Array.isArray(page[k]));
}

/** The items of one page, whichever paged action it came from. */
export function pageItems(page: Json): unknown[] {
  const member = itemsMember(page);
  return member === undefined ? [] : (page[member] as unknown[]);
}

/** The `next` token of a `Location` header such as `/api/m2m/v1/sms/{aname}/history?next=42`. */
export function nextToken(location: string | string[] | undefined): string | undefined {
  const value = Array.isArray(location) ? location[0] : location;
  if (!value) return undefined;
  return new URL(value, 'http://service.invalid').searchParams.get('next') ?? undefined;
}

/**
 * A page asked for from the previous page's last time (`earliest` paging) begins with the items of that time
 * the previous page already had: they are dropped.
 */
export function withoutRepeated(page: Json, seen: { at: unknown; count: number }): Json {
  const member = itemsMember(page);
  if (member === undefined) return page;
  const items = page[member] as Json[];
  let drop = 0;
  while (drop < seen.count && drop < items.length && items[drop]!.occurredAt === seen.at) drop++;
  return drop ? { ...page, [member]: items.slice(drop) } : page;
}

/**
 * The device list pages by the largest device id seen so far: the first identifier of each device, in
 * string order (docs/spec-decisions.md). The emulator orders devices the same way.
 */
export function largestDeviceId(devices: Json[]): string {
  let max = '';
  for (const d of devices) {
    const id = String(((d.deviceIds as Json[] | undefined)?.[0]?.id as string | undefined) ?? '');
    if (id > max) max = id;
  }
  return max;
}

export async function collect(op: Operation, input: Json, pages: AsyncIterable<Json>): Promise<Json> {
  const items: unknown[] = [];
  let last: Json = {};
  for await (const page of pages) {
    items.push(...pageItems(page));
    last = page;
  }
  switch (op.action) {
    case 'location.getReport':
      return {
        txid: last.txid ?? input.txid,
        totalCount: last.totalCount ?? items.length,
        devLocationList: items,
      };
    case 'location.getExclusions':
      return {
        accountName: last.accountName ?? input.accountName,
        allDevice: last.allDevice ?? false,
        totalCount: last.totalCount ?? items.length,
        ...(last.updateTime !== undefined ? { updateTime: last.updateTime } : {}),
        exclusion: items,
      };
    default: {
      // Every other member of the last page (a group's name and description), and every page's items.
      const { hasMoreData: _more, ...rest } = last;
      return { ...rest, [itemsMember(last) ?? 'devices']: items };
    }
  }
}
