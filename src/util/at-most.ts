/**
 * Calls `fn` for each item, at most `width` calls at a time, taking the next item only when a call ends: a lazy
 * source (the store read a batch at a time) is never read further than the calls under way. The first failure
 * stops the taking of items, and is thrown once the calls under way have ended.
 */
export async function eachAtMost<T>(
  items: Iterable<T> | AsyncIterable<T>,
  width: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  // An async source (the store) is asked for one item at a time: its `next` calls queue.
  const it = Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : items[Symbol.iterator]();
  let failed = false;
  const worker = async () => {
    while (!failed) {
      const next = await it.next();
      if (next.done) return;
      try {
        await fn(next.value);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.max(1, width) }, worker));
  const rejected = settled.find((s) => s.status === 'rejected');
  if (rejected) throw rejected.reason;
}
