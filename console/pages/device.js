/**
 * `#/devices/<id>`: one device across every run, to tell a flaky device from a bad rollout. A dry run's entry (a
 * call it planned, `skipped` with DRY RUN) says "dry run" beside its run's status: nothing was sent to the device.
 */
import { enc } from '../api.js';
import { useApi } from '../hooks.js';
import { shortId } from '../format.js';
import {
  html,
  Alert,
  Badge,
  EmptyRow,
  ErrorType,
  Heading,
  Outcome,
  Returned,
  TableFrame,
  Time,
} from '../ui.js';

/** @param {{ id: string }} props */
export function DevicePage({ id }) {
  const { data, error } = useApi(`/devices/${enc(id)}`);
  /** @type {any[]} */
  const results = data?.results ?? [];

  return html`<${Heading}>Device ${id}</${Heading}>
    <p class="lead">Every run and step that touched this device, newest first (at most 500 results).</p>
    <${Alert} message=${error} />
    <${TableFrame}><table class="data">
      <caption>History</caption>
      <thead>
        <tr>
          <th scope="col">Run</th>
          <th scope="col">Playbook</th>
          <th scope="col">Run status</th>
          <th scope="col">Step</th>
          <th scope="col">Outcome</th>
          <th scope="col">Error type</th>
          <th scope="col">Returned</th>
          <th scope="col">At</th>
        </tr>
      </thead>
      <tbody>
        ${results.map(
          (r) =>
            html`<tr>
              <td>
                <a class="mono" href=${`#/runs/${enc(r.runId)}`} title=${r.runId}>${shortId(r.runId)}</a>
              </td>
              <td>${r.playbook}</td>
              <td>
                <${Badge}
                  value=${r.runStatus}
                />${r.dryRun && html` <span class="dry-run-tag">dry run</span>`}
              </td>
              <td class="mono">${r.step}</td>
              <td><${Outcome} outcome=${r.outcome} attempts=${r.attempts} /></td>
              <td><${ErrorType} type=${r.errorType} errorClass=${r.errorClass} /></td>
              <td><${Returned} data=${r.data} /></td>
              <td><${Time} iso=${r.at} /></td>
            </tr>`,
        )}
        ${data && !results.length && html`<${EmptyRow} cols=${8}>No results recorded for this device</${EmptyRow}>`}
      </tbody>
    </table></${TableFrame}>`;
}
