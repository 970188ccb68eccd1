/* global clearTimeout, AbortController */
/** The data hooks the pages share: read an API path, keep reading it while it is shown. */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';

/**
 * @template T
 * @typedef {{ data: T | undefined, error: string | null, loading: boolean, reload: () => void }} ApiState
 */

/**
 * Reads `path` (null: nothing yet) and, with `interval` > 0, reads it again that long after each answer.
 * The next read waits for the last answer rather than ticking on a timer, so a slow daemon is never asked
 * twice at once. A failed read keeps the last data of the same path on screen with the error beside it: an
 * operator watching a run should not lose the page to one dropped request.
 * @template T
 * @param {string | null} path
 * @param {{ interval?: number }} [options]
 * @returns {ApiState<T>}
 */
export function useApi(path, { interval = 0 } = {}) {
  // `from`: the path the data was read from.
  const [state, setState] = useState({ data: undefined, from: path, error: null, loading: true });
  const [nonce, setNonce] = useState(0);
  useEffect(() => {
    if (path === null) return undefined;
    let stopped = false;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    /** @type {AbortController | undefined} */
    let ctrl;
    const load = async () => {
      ctrl = new AbortController();
      try {
        const data = await api(path, { signal: ctrl.signal });
        if (!stopped) setState({ data, from: path, error: null, loading: false });
      } catch (err) {
        if (stopped) return;
        // The data of another path (the filters before a change the daemon refused) is not this path's.
        setState((s) => ({
          data: s.from === path ? s.data : undefined,
          from: path,
          error: /** @type {Error} */ (err).message,
          loading: false,
        }));
      }
      if (!stopped && interval > 0) timer = setTimeout(load, interval);
    };
    load();
    return () => {
      stopped = true;
      clearTimeout(timer);
      ctrl?.abort();
    };
  }, [path, interval, nonce]);
  return { ...state, reload: () => setNonce((n) => n + 1) };
}
