/* global EventSource, clearTimeout */
/**
 * The run stream (`GET /console/api/runs/stream`), shared: the runs list and a run's page both listen, and
 * one connection serves them, open only while someone listens.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.js';

/** @typedef {'connecting' | 'live' | 'reconnecting'} StreamState */

/** @type {Set<(run: any) => void>} */
const runListeners = new Set();
/** @type {Set<(state: StreamState) => void>} */
const stateListeners = new Set();
/** @type {EventSource | undefined} */
let source;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let retry;
/** @type {StreamState} */
let state = 'connecting';

/** @param {StreamState} next */
function setState(next) {
  state = next;
  for (const l of stateListeners) l(state);
}

function open() {
  source = new EventSource('/console/api/runs/stream');
  source.onopen = () => setState('live');
  source.addEventListener('run', (e) => {
    let run;
    try {
      run = JSON.parse(/** @type {MessageEvent} */ (e).data);
    } catch {
      return; // a torn event: the next one for this run carries its whole row again
    }
    for (const l of runListeners) l(run);
  });
  source.onerror = () => {
    setState('reconnecting');
    // The browser retries a dropped stream by itself, but gives up for good on an answer that is not a
    // stream (a 401 after the session lapsed, a 503 from a restarting daemon): start over then.
    if (source?.readyState === EventSource.CLOSED) {
      source.close();
      // An EventSource does not say why it was refused: ask the API, whose 401 brings up the sign-in form.
      api('/overview').catch(() => undefined);
      retry = setTimeout(() => {
        if (runListeners.size) open();
      }, 5000);
    }
  };
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let closing;

/**
 * Closes once nobody has listened for a moment, so that going from the runs list to a run (one page
 * unmounting, the next mounting) keeps the one connection.
 */
function closeSoon() {
  clearTimeout(closing);
  closing = setTimeout(() => {
    if (runListeners.size) return;
    clearTimeout(retry);
    source?.close();
    source = undefined;
    setState('connecting');
  }, 1000);
}

/**
 * Calls the latest `onRun` with each run the stream announces while the calling component is shown, and
 * answers the connection's state for the live indicator.
 * @param {(run: any) => void} onRun
 * @returns {StreamState}
 */
export function useRunStream(onRun) {
  const [current, setCurrent] = useState(state);
  const latest = useRef(onRun);
  latest.current = onRun;
  useEffect(() => {
    /** @param {any} run */
    const listener = (run) => latest.current(run);
    runListeners.add(listener);
    stateListeners.add(setCurrent);
    setCurrent(state);
    // A stream the browser gave up on (refused while signed out) is opened again at once, not at its retry.
    if (!source || source.readyState === EventSource.CLOSED) {
      clearTimeout(retry);
      open();
    }
    return () => {
      runListeners.delete(listener);
      stateListeners.delete(setCurrent);
      closeSoon();
    };
  }, []);
  return current;
}
