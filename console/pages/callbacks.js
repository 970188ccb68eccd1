/**
 * `#/callbacks`: what the services have sent, what was turned away and why, and how far behind the inbox
 * is. Re-read every 5 s.
 */
import { useApi } from '../hooks.js';
import { html, Alert, EmptyRow, Heading, TableFrame, Time } from '../ui.js';

export function CallbacksPage() {
  const { data, error } = useApi('/callbacks', { interval: 5000 });
  /** @type {any[]} */
  const services = data?.services ?? [];
  /** @type {any[]} */
  const rejected = data?.rejected ?? [];
  /** @type {any[]} */
  const recent = data?.recent ?? [];

  return html`<${Heading}>Callbacks</${Heading}>
    <${Alert} message=${error} />
    <dl class="facts">
      <div>
        <dt>Backlog</dt>
        <dd>${data ? `${data.backlog} waiting in the inbox` : '…'}</dd>
      </div>
    </dl>
    <div class="columns">
      <${TableFrame}><table class="data">
        <caption>By service</caption>
        <thead>
          <tr>
            <th scope="col">Service</th>
            <th scope="col" class="num">Received</th>
            <th scope="col" class="num">Duplicates</th>
          </tr>
        </thead>
        <tbody>
          ${services.map(
            (s) =>
              html`<tr key=${s.service}>
                <th scope="row">${s.service}</th>
                <td class="num">${s.received}</td>
                <td class="num">${s.duplicates}</td>
              </tr>`,
          )}
          ${data && !services.length && html`<${EmptyRow} cols=${3}>No callbacks received.</${EmptyRow}>`}
        </tbody>
      </table></${TableFrame}>
      <${TableFrame}><table class="data">
        <caption>Rejections by reason</caption>
        <thead>
          <tr>
            <th scope="col">Reason</th>
            <th scope="col" class="num">Count</th>
          </tr>
        </thead>
        <tbody>
          ${rejected.map(
            (r) =>
              html`<tr key=${r.reason}>
                <th scope="row">${r.reason}</th>
                <td class="num">${r.count}</td>
              </tr>`,
          )}
          ${data && !rejected.length && html`<${EmptyRow} cols=${2}>No callbacks rejected.</${EmptyRow}>`}
        </tbody>
      </table></${TableFrame}>
    </div>
    <${TableFrame}><table class="data">
      <caption>Recent callbacks</caption>
      <thead>
        <tr>
          <th scope="col">Id</th>
          <th scope="col">Service</th>
          <th scope="col">Kind</th>
          <th scope="col">Request</th>
          <th scope="col">Received</th>
          <th scope="col">Processed</th>
        </tr>
      </thead>
      <tbody>
        ${recent.map(
          (c) =>
            html`<tr key=${c.id}>
              <td class="mono">${c.id}</td>
              <td>${c.service}</td>
              <td>${c.kind}</td>
              <td class="mono">${c.requestId}</td>
              <td><${Time} iso=${c.receivedAt} /></td>
              <td>${c.processed ? 'yes' : html`<span class="badge badge-queued">not yet</span>`}</td>
            </tr>`,
        )}
        ${data && !recent.length && html`<${EmptyRow} cols=${6}>No callbacks yet.</${EmptyRow}>`}
      </tbody>
    </table></${TableFrame}>`;
}
