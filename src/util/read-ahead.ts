/**
 * Yields what `source` yields, asking it for the next value before handing out the current one: the request
 * for page N+1 is on its way while the caller works on page N, so the caller's work overlaps the service's.
 *
 * A caller that stops early leaves one value read for nothing; this waits for that read to settle, so that no
 * request outlives the loop. An error of the read ahead reaches the caller at its next turn, as it would have.
 */
export async function* readAhead<T>(source: AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
  const it = source[Symbol.asyncIterator]();
  let next = it.next();
  let done = false;
  try {
    for (;;) {
      const r = await next;
      if (r.done) {
        done = true;
        return;
      }
      next = it.next();
      // Met by the `await` above at the next turn; until then, not an unhandled rejection.
      next.catch(() => undefined);
      yield r.value;
    }
  } catch (e) {
    done = true;
    throw e;
  } finally {
    if (!done) await it.return?.();
  }
}
