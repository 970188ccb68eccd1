/**
 * `#/rates`: each rate area's budget and how much of it is in use, to see which vendor API is holding the
 * fleet back. Re-read every 2 s.
 */
import { useApi } from '../hooks.js';
import { html, Alert, EmptyRow, Heading, None, TableFrame, Time } from '../ui.js';

export function RatesPage() {
  const { data, error } = useApi('/rates', { interval: 2000 });
  /** @type {any[]} */
  const areas = data?.areas ?? [];

  return html`<${Heading}>Rate budgets</${Heading}>
    <${Alert} message=${error} />
    <${TableFrame}><table class="data">
      <caption class="vh">Rate budgets</caption>
      <thead>
        <tr>
          <th scope="col">Area</th>
          <th scope="col" class="num">Budget (req/s)</th>
          <th scope="col" class="num">This daemon (req/s)</th>
          <th scope="col" class="num">Concurrency</th>
          <th scope="col" class="num">In flight</th>
          <th scope="col" class="num">Waiting</th>
          <th scope="col" class="num">Waited (s)</th>
          <th scope="col" class="num">429s</th>
          <th scope="col">Paused until</th>
        </tr>
      </thead>
      <tbody>
        ${areas.map(
          (a) =>
            html`<tr key=${a.area}>
              <th scope="row" class="mono">${a.area}</th>
              <td class="num">${a.budget}</td>
              <td class="num">${a.rate}</td>
              <td class="num">${a.concurrency}</td>
              <td class="num">${a.inFlight}</td>
              <td class="num">${a.waiting}</td>
              <td class="num">${a.waitedSeconds}</td>
              <td class="num">${a.throttled}</td>
              <td>${a.pausedUntil ? html`<${Time} iso=${a.pausedUntil} />` : html`<${None} />`}</td>
            </tr>`,
        )}
        ${data && !areas.length && html`<${EmptyRow} cols=${9}>No rate areas configured.</${EmptyRow}>`}
      </tbody>
    </table></${TableFrame}>`;
}
