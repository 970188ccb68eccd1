/* global location */
/**
 * A run's per-device table: each device's latest result in each step, filtered and paged by the daemon,
 * and the same rows as CSV for a spreadsheet or a retry list. Its filters and page live in the hash's query,
 * as the runs list's do: Back from a device's page, or a reload, shows the same rows, and a filtered table can
 * be bookmarked and shared.
 */
import { useEffect, useState } from 'preact/hooks';
import { enc, query } from '../api.js';
import { shortId } from '../format.js';
import { useApi } from '../hooks.js';
import { html, Alert, EmptyRow, ErrorType, None, Outcome, Returned, TableFrame, Time } from '../ui.js';

const OUTCOMES = ['accepted', 'succeeded', 'failed', 'skipped', 'unconfirmed'];
const FILTERS = /** @type {const} */ (['step', 'outcome', 'errorType', 'device']);

/**
 * @typedef {{ step: string, outcome: string, errorType: string, device: string }} Filters
 */

/**
 * What the table says when it has no rows: of a dry run unfiltered, that it planned no call on a device (its
 * planned devices are rows, `skipped` with DRY RUN).
 * @param {any} run
 * @param {Filters} filters
 * @param {string} after
 */
function emptyText(run, filters, after) {
  const unfiltered = !after && FILTERS.every((k) => !filters[k]);
  return run.dryRun && unfiltered
    ? 'No device results: no step of this dry run has planned a call on a device (see Planned calls).'
    : 'No device results match.';
}

/** The error type of the devices a dry run planned: not an error its counts' `byError` counts. */
const DRY_RUN = 'DRY RUN';

/**
 * @param {{ run: any, active: boolean, params: URLSearchParams }} props
 * `active`: the run is still going, so results keep arriving: re-read the page shown every 2 s.
 */
export function RunDevices({ run, active, params }) {
  /** @type {Filters} */
  const filters = /** @type {any} */ (Object.fromEntries(FILTERS.map((k) => [k, params.get(k) ?? ''])));
  // The cursor of the page shown; those of the pages before it are in the history, for Back.
  const after = params.get('after') ?? '';
  const [draftDevice, setDraftDevice] = useState(filters.device);
  // Back and forward change the filter under a field being typed in: it shows the filter applied.
  useEffect(() => setDraftDevice(filters.device), [filters.device]);
  const base = `/runs/${enc(run.id)}/devices`;
  const { data, error } = useApi(`${base}${query({ ...filters, after })}`, { interval: active ? 2000 : 0 });

  /** @param {Partial<Filters & { after: string }>} change */
  const go = (change) => {
    location.hash = `#/runs/${enc(run.id)}${query({ ...filters, after, ...change })}`;
  };
  /**
   * A filter changed: from the first page.
   * @param {Partial<Filters>} change
   */
  const apply = (change) => go({ ...change, after: '' });
  /**
   * A select applies at once, and takes the device id typed so far along: the form is applied as a whole.
   * @param {'step' | 'outcome' | 'errorType'} key
   */
  const onSelect = (key) => (/** @type {Event} */ e) =>
    apply({ [key]: /** @type {HTMLSelectElement} */ (e.currentTarget).value, device: draftDevice.trim() });

  /** @type {any[]} */
  const steps = run.steps ?? [];
  const errorTypes = Object.keys(run.devices?.byError ?? {});
  if (run.dryRun && !errorTypes.includes(DRY_RUN)) errorTypes.push(DRY_RUN);
  // An error type the address names but the run's counts do not (yet) stays selectable rather than "All".
  if (filters.errorType && !errorTypes.includes(filters.errorType)) errorTypes.push(filters.errorType);
  /** @type {any[]} */
  const rows = data?.devices ?? [];

  return html`<section aria-labelledby="devices-title">
    <h2 id="devices-title">Devices</h2>
    <form
      class="filters"
      aria-label="Filter devices"
      onSubmit=${(/** @type {Event} */ e) => {
        e.preventDefault();
        apply({ device: draftDevice.trim() });
      }}
    >
      <label class="field">
        <span>Step</span>
        <select name="step" value=${filters.step} onChange=${onSelect('step')}>
          <option value="">All</option>
          ${steps.map((s) => html`<option value=${s.id}>${s.id}</option>`)}
        </select>
      </label>
      <label class="field">
        <span>Outcome</span>
        <select name="outcome" value=${filters.outcome} onChange=${onSelect('outcome')}>
          <option value="">All</option>
          ${OUTCOMES.map((o) => html`<option value=${o}>${o}</option>`)}
        </select>
      </label>
      <label class="field">
        <span>Error type</span>
        <select name="errorType" value=${filters.errorType} onChange=${onSelect('errorType')}>
          <option value="">All</option>
          ${errorTypes.map((t) => html`<option value=${t}>${t}</option>`)}
        </select>
      </label>
      <label class="field">
        <span>Device id</span>
        <input
          type="text"
          name="device"
          value=${draftDevice}
          onInput=${(/** @type {Event} */ e) => setDraftDevice(/** @type {HTMLInputElement} */ (e.currentTarget).value)}
        />
      </label>
      <button type="submit">Apply filters</button>
      <a class="download" href=${`/console/api${base}.csv${query(filters)}`} download>Download CSV</a>
    </form>
    <${Alert} message=${error} />
    <${TableFrame}><table class="data">
      <caption class="vh">
        Devices
      </caption>
      <thead>
        <tr>
          <th scope="col">Step</th>
          <th scope="col">Device</th>
          <th scope="col">Outcome</th>
          <th scope="col">Error type</th>
          <th scope="col">Returned</th>
          <th scope="col">Request</th>
          <th scope="col">At</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (d) =>
            html`<tr key=${`${d.step}|${d.deviceId}`}>
              <td class="mono">${d.step}</td>
              <td>
                <a class="mono" href=${`#/devices/${enc(d.deviceId)}`}>${d.deviceId}</a>
                <span class="muted under">${d.kind}</span>
              </td>
              <td><${Outcome} outcome=${d.outcome} attempts=${d.attempts} /></td>
              <td><${ErrorType} type=${d.errorType} errorClass=${d.errorClass} /></td>
              <td><${Returned} data=${d.data} /></td>
              <td class="mono" title=${d.requestId}>
                ${d.requestId ? shortId(d.requestId) : html`<${None} />`}
              </td>
              <td><${Time} iso=${d.at} /></td>
            </tr>`,
        )}
        ${data && !rows.length && html`<${EmptyRow} cols=${7}>${emptyText(run, filters, after)}</${EmptyRow}>`}
      </tbody>
    </table></${TableFrame}>
    <p class="pager">
      <button type="button" onClick=${() => go({ after: '' })} disabled=${!after}>First page</button>
      ${data?.next && html`<button type="button" onClick=${() => go({ after: data.next })}>Next page</button>`}
    </p>
  </section>`;
}
