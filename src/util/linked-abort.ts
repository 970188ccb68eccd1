/**
 * An AbortController that also aborts when `parent` does (with the parent's reason), and `unlink()`, which stops
 * listening to the parent. What `AbortSignal.any([parent, own])` gives, for one listener on the parent: in Node
 * 20 `any` makes a third signal that both sources hold weak references to, and costs about twice as much CPU
 * (a daemon's run made two of them).
 */
export function linkedController(parent: AbortSignal): { controller: AbortController; unlink: () => void } {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { controller, unlink: () => undefined };
  }
  const onAbort = () => controller.abort(parent.reason);
  parent.addEventListener('abort', onAbort, { once: true });
  return { controller, unlink: () => parent.removeEventListener('abort', onAbort) };
}
