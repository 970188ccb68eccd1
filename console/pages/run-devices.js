/**
 * A run's per-device table: each device's latest result in each step, filtered and paged by the daemon,
 * and the same rows as CSV for a spreadsheet or a retry list.
 */
import { useState } from 'preact/hooks';
import { enc, query } from '../api.js';
import { useApi } from '../hooks.js';
import { html, Alert, Badge, EmptyRow, None, Time } from '../ui.js';

const OUTCOMES = ['accepted', 'succeeded', 'failed', 'skipped', 'unconfirmed'];

/**
 * @param {{ run: any, active: boolean }} props
 * `active`: the run is still going, so results keep arriving: re-read the page shown every 2 s.
 */
export function RunDevices({ run, active }) {
  const [filters, setFilters] = useState({ step: '', outcome: '', errorType: '', device: '' });
  const [draftDevice, setDraftDevice] = useState('');
  // The cursors of the pages before this one are not kept: the pager goes forward or back to the first.
  const [after, setAfter] = useState('');
  const base = `/runs/${enc(run.id)}/devices`;
  const { data, error } = useApi(`${base}${query({ ...filters, after })}`, { interval: active ? 2000 : 0 });

  /** @param {Partial<typeof filters>} change */
  const apply = (change) => {
    setFilters((f) => ({ ...f, ...change }));
    setAfter('');
  };
  /**
   * A select applies at once, and takes the device id typed so far along: the form is applied as a whole.
   * @param {'step' | 'outcome' | 'errorType'} key
   */
  const onSelect = (key) => (/** @type {Event} */ e) =>
    apply({ [key]: /** @type {HTMLSelectElement} */ (e.currentTarget).value, device: draftDevice.trim() });

  /** @type {any[]} */
  const steps = run.steps ?? [];
  const errorTypes = Object.keys(run.devices?.byError ?? {});
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
    <table class="data">
      <caption class="vh">
        Devices
      </caption>
      <thead>
        <tr>
          <th scope="col">Step</th>
          <th scope="col">Device</th>
          <th scope="col">Kind</th>
          <th scope="col">Outcome</th>
          <th scope="col">Error type</th>
          <th scope="col">Error class</th>
          <th scope="col" class="num">Attempts</th>
          <th scope="col">Request</th>
          <th scope="col">At</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          (d) =>
            html`<tr key=${`${d.step}|${d.deviceId}`}>
              <td class="mono">${d.step}</td>
              <td><a class="mono" href=${`#/devices/${enc(d.deviceId)}`}>${d.deviceId}</a></td>
              <td>${d.kind}</td>
              <td><${Badge} value=${d.outcome} /></td>
              <td>${d.errorType ?? html`<${None} />`}</td>
              <td>${d.errorClass ?? html`<${None} />`}</td>
              <td class="num">${d.attempts}</td>
              <td class="mono">${d.requestId ?? html`<${None} />`}</td>
              <td><${Time} iso=${d.at} /></td>
            </tr>`,
        )}
        ${data && !rows.length && html`<${EmptyRow} cols=${9}>No device results match.</${EmptyRow}>`}
      </tbody>
    </table>
    <p class="pager">
      <button type="button" onClick=${() => setAfter('')} disabled=${!after}>First page</button>
      ${data?.next && html`<button type="button" onClick=${() => setAfter(data.next)}>Next page</button>`}
    </p>
  </section>`;
}
