/* global location, history, document, AbortController */
/**
 * `#/runs`: every run, newest first, filtered by the hash's query (so a filtered list can be bookmarked and
 * shared), kept current by the run stream. The runs "Load more" brought are in the hash too (`more`: the cursor
 * it last loaded from), so that a reload, or Back from a run, shows them again.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, enc, query } from '../api.js';
import { useApi } from '../hooks.js';
import { useRunStream } from '../stream.js';
import { durationBetween, formatHour, fromLocalInput, shortId, toLocalInput } from '../format.js';
import { html, Alert, Badge, DeviceTally, EmptyRow, Heading, TableFrame, Time } from '../ui.js';
import { BarChart } from '../charts.js';

export const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
const TRIGGERS = ['callback', 'schedule', 'manual'];
const FILTERS = /** @type {const} */ (['playbook', 'status', 'trigger', 'from', 'to']);

/**
 * @typedef {{ playbook: string, status: string, trigger: string, from: string, to: string }} Filters
 * `from` and `to` are UTC ISO, as the API takes them, whatever the reader's zone.
 */

/**
 * Whether a run the stream announced belongs in the list as filtered, by the rules the daemon applies.
 * @param {any} run
 * @param {Filters} f
 */
function matches(run, f) {
  const started = Date.parse(run.startedAt);
  return (
    (!f.playbook || run.playbook === f.playbook) &&
    (!f.status || run.status === f.status) &&
    (!f.trigger || run.trigger?.type === f.trigger) &&
    (!f.from || started >= Date.parse(f.from)) &&
    (!f.to || started <= Date.parse(f.to))
  );
}

/**
 * The list with a streamed run in it. A run already shown is updated where it is, even if it no longer
 * matches (a row vanishing under the cursor is worse than a stale filter); a new one goes where its start
 * time puts it, unless that is past the rows loaded so far, where "Load more" will bring it.
 * @param {{ runs: any[], next?: string, loaded: boolean }} list
 * @param {any} run
 * @param {Filters} filters
 */
function upsert(list, run, filters) {
  const i = list.runs.findIndex((r) => r.id === run.id);
  if (i >= 0) return { ...list, runs: list.runs.with(i, { ...list.runs[i], ...run }) };
  if (!list.loaded || !matches(run, filters)) return list;
  const started = Date.parse(run.startedAt);
  let at = list.runs.findIndex((r) => Date.parse(r.startedAt) <= started);
  if (at < 0) {
    if (list.next) return list;
    at = list.runs.length;
  }
  return { ...list, runs: list.runs.toSpliced(at, 0, run) };
}

/** How many pages of 200 runs a reload reads at most to show the runs "Load more" brought. */
const MAX_PAGES = 10;

/**
 * The list as "Load more" left it: the first runs down to cursor `more`, and the page from it. The page from it
 * is read first: its first run is where the runs above end, read from the top until it comes (runs started
 * meanwhile are there too).
 * @param {Filters} filters
 * @param {string} more
 * @param {AbortSignal} signal
 * @returns {Promise<{ runs: any[], next?: string }>}
 */
async function loadThrough(filters, more, signal) {
  const tail = await api(`/runs${query({ ...filters, before: more })}`, { signal });
  const stop = tail.runs[0]?.id;
  /** @type {any[]} */
  const runs = [];
  /** @type {string | undefined} */
  let before;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await api(`/runs${query({ ...filters, before, limit: 200 })}`, { signal });
    const at = stop === undefined ? -1 : page.runs.findIndex((/** @type {any} */ r) => r.id === stop);
    if (at >= 0) return { runs: [...runs, ...page.runs.slice(0, at), ...tail.runs], next: tail.next };
    runs.push(...page.runs);
    if (!page.next) return { runs, next: undefined };
    before = page.next;
  }
  // Too far down to read again at once: as far as read, "Load more" goes on from there.
  return { runs, next: before };
}

/** @param {{ params: URLSearchParams }} props */
export function RunsPage({ params }) {
  /** @type {Filters} */
  const filters = /** @type {any} */ (Object.fromEntries(FILTERS.map((k) => [k, params.get(k) ?? ''])));
  const qs = query(filters);
  const more = params.get('more') ?? '';
  const [list, setList] = useState({ runs: /** @type {any[]} */ ([]), next: undefined, loaded: false });
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(true);
  const focusRow = useRef(/** @type {number | null} */ (null));

  useEffect(() => {
    const ctrl = new AbortController();
    setBusy(true);
    (more ? loadThrough(filters, more, ctrl.signal) : api(`/runs${qs}`, { signal: ctrl.signal })).then(
      (body) => {
        setList({ runs: body.runs, next: body.next, loaded: true });
        setError(null);
        setBusy(false);
      },
      (err) => {
        if (ctrl.signal.aborted) return;
        // The rows of the filters before are not those asked for.
        setList({ runs: [], next: undefined, loaded: false });
        setError(err.message);
        setBusy(false);
      },
    );
    return () => ctrl.abort();
  }, [qs, more]);

  const live = useRunStream((run) => setList((l) => upsert(l, run, filters)));

  const loadMore = async () => {
    setBusy(true);
    const from = list.next;
    try {
      const body = await api(`/runs${query({ ...filters, before: from })}`);
      // In the address, in place of the list before (Back goes to the page before the list, not a page up).
      history.replaceState(null, '', `#/runs${query({ ...filters, more: from })}`);
      setList((l) => {
        const seen = new Set(l.runs.map((r) => r.id));
        focusRow.current = l.runs.length;
        return {
          ...l,
          runs: [...l.runs, ...body.runs.filter((/** @type {any} */ r) => !seen.has(r.id))],
          next: body.next,
        };
      });
      setError(null);
    } catch (err) {
      setError(/** @type {Error} */ (err).message);
    }
    setBusy(false);
  };

  // After "Load more", focus the first new run: the button may be gone, and the new rows are what was asked for.
  useEffect(() => {
    if (focusRow.current === null) return;
    document.querySelectorAll('#runs-table tbody tr')[focusRow.current]?.querySelector('a')?.focus();
    focusRow.current = null;
  }, [list]);

  return html`<div class="page-head">
      <${Heading}>Runs</${Heading}>
      <${LiveIndicator} state=${live} />
    </div>
    <${Alert} message=${error} />
    <${RunFilters} filters=${filters} />
    <${RunsChart} />
    <${TableFrame}><table id="runs-table" class="data" aria-busy=${busy ? 'true' : 'false'}>
      <caption class="vh">Runs</caption>
      <thead>
        <tr>
          <th scope="col">Run</th>
          <th scope="col">Playbook</th>
          <th scope="col">Status</th>
          <th scope="col">Trigger</th>
          <th scope="col">Started</th>
          <th scope="col" class="num">Duration</th>
          <th scope="col" class="num">Devices</th>
        </tr>
      </thead>
      <tbody>
        ${list.runs.map((run) => html`<${RunRow} key=${run.id} run=${run} />`)}
        ${
          list.loaded &&
          !list.runs.length &&
          html`<${EmptyRow} cols=${7}>${qs ? 'No runs match these filters.' : 'No runs yet.'}</${EmptyRow}>`
        }
      </tbody>
    </table></${TableFrame}>
    ${
      list.next &&
      html`<p class="pager">
        <button type="button" onClick=${loadMore} disabled=${busy}>Load more</button>
      </p>`
    }`;
}

/** @param {{ run: any }} props */
function RunRow({ run }) {
  return html`<tr data-run-id=${run.id}>
    <td><a class="mono" href=${`#/runs/${enc(run.id)}`} title=${run.id}>${shortId(run.id)}</a></td>
    <td>${run.playbook}</td>
    <td>
      <${Badge}
        value=${run.status}
      />${run.cancelRequested && html` <span class="muted">cancel requested</span>`}
    </td>
    <td>${run.triggerText}</td>
    <td><${Time} iso=${run.startedAt} /></td>
    <td class="num">${durationBetween(run.startedAt, run.endedAt)}</td>
    <td class="num"><${DeviceTally} devices=${run.devices} /></td>
  </tr>`;
}

/** @param {{ state: string }} props */
export function LiveIndicator({ state }) {
  const text = { live: 'Live', reconnecting: 'Reconnecting…' }[state] ?? 'Connecting…';
  return html`<p class=${`live live-${state}`} aria-live="polite">${text}</p>`;
}

/**
 * The filters live in the hash: changing one navigates, and the page reads them back from there.
 * @param {{ filters: Filters }} props
 */
function RunFilters({ filters }) {
  const { data } = useApi('/playbooks');
  const names = (data?.playbooks ?? []).map((/** @type {any} */ p) => p.name);
  // A playbook named in the hash but not (or not yet) listed stays selectable rather than silently "All".
  if (filters.playbook && !names.includes(filters.playbook)) names.push(filters.playbook);

  /** @param {keyof Filters} key @param {string} value */
  const set = (key, value) => {
    location.hash = `#/runs${query({ ...filters, [key]: value })}`;
  };
  /** @param {keyof Filters} key */
  const onSelect = (key) => (/** @type {Event} */ e) =>
    set(key, /** @type {HTMLSelectElement} */ (e.currentTarget).value);
  /** @param {keyof Filters} key */
  const onTime = (key) => (/** @type {Event} */ e) =>
    set(key, fromLocalInput(/** @type {HTMLInputElement} */ (e.currentTarget).value));

  return html`<form
    class="filters"
    aria-label="Filter runs"
    onSubmit=${(/** @type {Event} */ e) => e.preventDefault()}
  >
    <label class="field">
      <span>Playbook</span>
      <select name="playbook" value=${filters.playbook} onChange=${onSelect('playbook')}>
        <option value="">All</option>
        ${names.map((/** @type {string} */ n) => html`<option value=${n}>${n}</option>`)}
      </select>
    </label>
    <label class="field">
      <span>Status</span>
      <select name="status" value=${filters.status} onChange=${onSelect('status')}>
        <option value="">All</option>
        ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
      </select>
    </label>
    <label class="field">
      <span>Trigger</span>
      <select name="trigger" value=${filters.trigger} onChange=${onSelect('trigger')}>
        <option value="">All</option>
        ${TRIGGERS.map((t) => html`<option value=${t}>${t}</option>`)}
      </select>
    </label>
    <label class="field">
      <span>From</span>
      <input
        type="datetime-local"
        name="from"
        value=${toLocalInput(filters.from)}
        onChange=${onTime('from')}
      />
    </label>
    <label class="field">
      <span>To</span>
      <input type="datetime-local" name="to" value=${toLocalInput(filters.to)} onChange=${onTime('to')} />
    </label>
  </form>`;
}

const CHART_SERIES = [
  ['succeeded', '--chart-succeeded'],
  ['failed', '--chart-failed'],
  ['cancelled', '--chart-cancelled'],
  ['running', '--chart-running'],
  ['queued', '--chart-queued'],
];

/** Runs started per hour over two days: a burst of failures shows as a red column before anyone reads a row. */
function RunsChart() {
  const { data, error } = useApi('/charts/runs?hours=48', { interval: 60_000 });
  const chart = useMemo(() => {
    if (!data) return null;
    /** @type {any[]} */
    const buckets = data.buckets ?? [];
    const series = CHART_SERIES.map(([status, color]) => ({
      label: status,
      color,
      data: buckets.map((b) => b[status] ?? 0),
    }));
    const totals = series.map((s) => `${s.data.reduce((a, b) => a + b, 0)} ${s.label}`);
    return {
      labels: buckets.map((b) => formatHour(b.at)),
      rowLabels: buckets.map((b) => html`<${Time} iso=${b.at} />`),
      series,
      summary: `Runs started per hour over the last ${data.hours} hours: ${totals.join(', ')}.`,
    };
  }, [data]);

  return html`<section class="panel" aria-labelledby="runs-chart-title">
    <h2 id="runs-chart-title">Runs over time</h2>
    <${Alert} message=${error} />
    ${
      chart &&
      html`<${BarChart}
        title="Runs over time"
        summary=${chart.summary}
        labels=${chart.labels}
        rowLabels=${chart.rowLabels}
        rowHeader="Hour starting"
        series=${chart.series}
        stacked
      />`
    }
  </section>`;
}
