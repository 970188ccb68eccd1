/* global document, location, history, window, requestAnimationFrame, URLSearchParams, setInterval, clearInterval */
/**
 * The console's shell: hash routing, the page title, the current nav link, focus on navigation, and the
 * sign-in form that stands in for any page once the daemon answers 401, and again after a reload while an action
 * waits for it (console/pending.js). The pages themselves live in pages/, one per route.
 */
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, onUnauthorized, signIn } from './api.js';
import { html, Heading, withCode } from './ui.js';
import { formatTime, shortId } from './format.js';
import { SignIn } from './signin.js';
import { drop, pending, signInReason } from './pending.js';
import { RunsPage } from './pages/runs.js';
import { RunPage } from './pages/run.js';
import { DevicePage } from './pages/device.js';
import { PlaybooksPage } from './pages/playbooks.js';
import { CallbacksPage } from './pages/callbacks.js';
import { RatesPage } from './pages/rates.js';

/** @param {string} s */
function decode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * What a hash shows. `section` is the nav link it belongs under; `path` (the hash without its query) keys
 * the page, so that going to another run starts a fresh page while a filter change (query only) keeps it.
 * @param {string} hash
 */
function resolve(hash) {
  const raw = hash.replace(/^#/, '');
  const q = raw.indexOf('?');
  const path = (q < 0 ? raw : raw.slice(0, q)).replace(/\/+$/, '') || '/runs';
  const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  const sub = /^\/(runs|devices)\/(.+)$/.exec(path);
  if (sub && sub[1] === 'runs') {
    const id = decode(sub[2]);
    return {
      path,
      section: '/runs',
      title: `Run ${shortId(id)}`,
      view: html`<${RunPage} id=${id} params=${params} />`,
    };
  }
  if (sub) {
    const id = decode(sub[2]);
    return { path, section: '/runs', title: `Device ${id}`, view: html`<${DevicePage} id=${id} />` };
  }
  switch (path) {
    case '/runs':
      return { path, section: path, title: 'Runs', view: html`<${RunsPage} params=${params} />` };
    case '/playbooks':
      return { path, section: path, title: 'Playbooks', view: html`<${PlaybooksPage} />` };
    case '/callbacks':
      return { path, section: path, title: 'Callbacks', view: html`<${CallbacksPage} />` };
    case '/rates':
      return { path, section: path, title: 'Rate budgets', view: html`<${RatesPage} />` };
    default:
      return { path, section: '', title: 'Page not found', view: html`<${NotFound} />` };
  }
}

/** How often the banners ask the daemon whether it still sends session logins, and its requests at all. */
const STATE_EVERY_MS = 10_000;

/**
 * The banners above every page while runs that need the service fail until the operator acts, which the daemon
 * says otherwise only in its log and `/status`: its credentials refused (`authRefused` of the overview: the access
 * token given, or the token request, until it is restarted with fresh ones; or the tokens it fetched, until one
 * fetched after `nextAttempt` is taken); or no session login sent (`loginsStopped`). Asked again at each page and
 * every few seconds; each gone once it no longer holds.
 */
function DaemonBanner() {
  const [state, setState] = useState(
    /** @type {{ loginsStopped?: string, authRefused?: { credential: string, since: string, error: string, nextAttempt?: string } } | null} */ (
      null
    ),
  );
  useEffect(() => {
    let live = true;
    const read = () =>
      api('/overview')
        .then((o) => live && setState(o ?? null))
        .catch(() => undefined);
    read();
    const timer = setInterval(read, STATE_EVERY_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);
  const refused = state?.authRefused;
  const stopped = state?.loginsStopped;
  return html`${
    refused &&
    html`<div class="alert" role="alert">
      <strong>Credentials refused.</strong>${' '}Since ${formatTime(refused.since)}, every run that calls the
      service
      fails:${' '}${
        refused.nextAttempt
          ? `the service refuses the tokens the daemon fetches, and it sends nothing until it fetches another at ${formatTime(refused.nextAttempt)}:`
          : 'the daemon sends it nothing until it is restarted with fresh credentials:'
      }${' '}${withCode(refused.error)}
    </div>`
  }${
    stopped &&
    html`<div class="alert" role="alert">
      <strong>Session logins stopped.</strong>${' '}Runs that call the service fail until the daemon logs in
      again:${' '}${withCode(stopped)}
    </div>`
  }`;
}

function NotFound() {
  return html`<${Heading}>Page not found</${Heading}>
    <p>The console has no page at this address. <a href="#/runs">See the runs</a>.</p>`;
}

/**
 * `aria-current="page"` on the link of the page shown; a run's or a device's page marks Runs with
 * `aria-current="true"` (where it belongs, but not that page itself).
 * @param {string} section
 * @param {string} path
 */
function markNav(section, path) {
  for (const a of document.querySelectorAll('nav[aria-label="Console"] a')) {
    const target = a.getAttribute('href')?.replace(/^#/, '');
    if (target === path) a.setAttribute('aria-current', 'page');
    else if (target === section) a.setAttribute('aria-current', 'true');
    else a.removeAttribute('aria-current');
  }
}

/**
 * Puts the page of the action waiting for sign-in (console/pending.js) in the address in place of the one there,
 * else `fallback` if given, with no new history entry: the one place that gives the kept page back, once signed
 * in, at start, or as the token leaves the address. Answers the hash in the address.
 * @param {string} [fallback]
 */
function showKeptPage(fallback) {
  const back = pending()?.hash ?? fallback;
  if (back !== undefined && back !== location.hash)
    history.replaceState(null, '', `${location.pathname}${location.search}${back}`);
  return location.hash;
}

/**
 * @param {{ signInError: string | null, waiting: boolean }} props
 * `waiting`: the sign-in form is shown at start, as an action asked for it before a reload.
 */
function App({ signInError, waiting }) {
  const [hash, setHash] = useState(location.hash);
  const [signingIn, setSigningIn] = useState(signInError !== null || waiting);
  const [startError, setStartError] = useState(signInError);
  const [generation, setGeneration] = useState(0);
  const route = resolve(hash);
  // Why an action asked to sign in (it keeps its reason as it asks); null when a read did, or the token in the
  // address.
  const reason = signingIn ? signInReason() : null;

  useEffect(() => {
    // The token address pasted into a console already open only changes the hash.
    const onHash = async () => {
      if (location.hash.startsWith('#token=')) {
        const error = await takeToken();
        setStartError(error);
        setSigningIn(error !== null);
        setGeneration((g) => g + 1);
      }
      setHash(location.hash);
    };
    window.addEventListener('hashchange', onHash);
    onUnauthorized(() => setSigningIn(true));
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    document.title = `${signingIn ? 'Sign in' : route.title} · fleetbook console`;
    markNav(route.section, route.path);
  }, [route.title, route.path, signingIn]);

  // Focus follows navigation (a new path, or the sign-in form taking over), not a filter change, and not
  // the first page load, where focus belongs to the browser.
  const first = useRef(true);
  useEffect(() => {
    if (first.current && !signingIn) {
      first.current = false;
      return;
    }
    first.current = false;
    requestAnimationFrame(() => document.querySelector('#main h1')?.focus());
  }, [route.path, signingIn]);

  if (signingIn)
    return html`<${SignIn}
      key=${generation}
      error=${startError}
      reason=${reason}
      onSignedIn=${() => {
        // The page of the action that asked for it, whatever the nav links did meanwhile.
        setHash(showKeptPage());
        setStartError(null);
        setSigningIn(false);
        setGeneration((g) => g + 1);
      }}
      onBack=${
        reason &&
        (() => {
          // On loopback, the page reads without a session: back to it, the action forgotten.
          drop();
          setStartError(null);
          setSigningIn(false);
          setGeneration((g) => g + 1);
        })
      }
    />`;
  return html`<${DaemonBanner} key=${`banner|${route.path}|${generation}`} />
    <div class="page" key=${`${route.path}|${generation}`}>${route.view}</div>`;
}

/**
 * The daemon's log gives the console's address as `/#token=...`: trade the token for the session cookie,
 * and take it out of the address bar (and so out of the history and of any screenshot) first, for the runs, or
 * the page of the action that waits for sign-in. Answers why the token was refused, or null.
 * @returns {Promise<string | null>}
 */
async function takeToken() {
  const token = decode(location.hash.slice('#token='.length));
  showKeptPage('#/runs');
  try {
    await signIn(token);
    return null;
  } catch (err) {
    return /** @type {Error} */ (err).message;
  }
}

/**
 * Whether the sign-in form stands in for the page at start: an action waits for it (the page was reloaded during
 * sign-in), and the page has no session (none was started meanwhile, in another tab). The page of the action is
 * the one shown, once signed in or now.
 * @returns {Promise<boolean>}
 */
async function waitingAction() {
  if (!pending()) return false;
  showKeptPage();
  const overview = await api('/overview').catch(() => null);
  return !overview?.authenticated;
}

async function start() {
  const signInError = location.hash.startsWith('#token=') ? await takeToken() : null;
  const waiting = signInError === null && (await waitingAction());
  const main = /** @type {HTMLElement} */ (document.getElementById('main'));
  // The skip link's own `#main` would be taken for a route: focus the main region instead.
  document.querySelector('.skip-link')?.addEventListener('click', (e) => {
    e.preventDefault();
    main.focus();
  });
  main.textContent = '';
  render(html`<${App} signInError=${signInError} waiting=${waiting} />`, main);
}

start();
