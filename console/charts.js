/* global Chart, document, getComputedStyle */
/**
 * A Chart.js bar chart (the UMD build's global `Chart`) with the same numbers in a table beside it. The
 * canvas is an image to assistive technology, labelled with a summary; the table, hidden from the eye but
 * not from a screen reader, holds the detail. Without Chart.js (the vendor file not served) the table is
 * shown instead, so the numbers are never lost. Its caption stays hidden: the section's heading says it.
 */
import { useEffect, useRef } from 'preact/hooks';
import { html, TableFrame } from './ui.js';

/**
 * @typedef {{ label: string, data: number[], color: string }} Series
 * `color` names a CSS custom property of style.css (`--chart-failed`), so the chart follows the color
 * scheme like the rest of the page.
 */

/** @param {string} name */
const cssVar = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/**
 * @param {string[]} labels
 * @param {Series[]} series
 */
const chartData = (labels, series) => ({
  labels,
  datasets: series.map((s) => ({ label: s.label, data: s.data, backgroundColor: cssVar(s.color) })),
});

/**
 * @param {{ title: string, summary: string, labels: string[], series: Series[], rowHeader: string,
 *   rowLabels?: any[], horizontal?: boolean, stacked?: boolean }} props
 * `rowLabels` lets the table say more than the axis (a full time where the axis says `14:00`).
 */
export function BarChart({ title, summary, labels, series, rowHeader, rowLabels, horizontal, stacked }) {
  const canvas = useRef(/** @type {HTMLCanvasElement | null} */ (null));
  const chart = useRef(/** @type {any} */ (null));
  const available = typeof Chart === 'function';

  useEffect(() => {
    if (!available || !canvas.current) return undefined;
    const text = cssVar('--text-muted');
    const grid = cssVar('--border');
    const axis = { stacked: !!stacked, ticks: { color: text, precision: 0 }, grid: { color: grid } };
    chart.current = new Chart(canvas.current, {
      type: 'bar',
      data: chartData(labels, series),
      options: {
        indexAxis: horizontal ? 'y' : 'x',
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        scales: {
          // Hour labels on a 48-hour axis: level and thinned out rather than tilted.
          x: { ...axis, ticks: { ...axis.ticks, maxRotation: 0, autoSkipPadding: 16 } },
          y: { ...axis, beginAtZero: true },
        },
        plugins: { legend: { display: series.length > 1, labels: { color: text } } },
      },
    });
    return () => chart.current?.destroy();
  }, []);

  useEffect(() => {
    if (!chart.current) return;
    chart.current.data = chartData(labels, series);
    chart.current.update('none');
  }, [labels, series]);

  // The chart's numbers as a table: read out beside the chart (visually hidden), or shown when there is no chart.
  const table = html`<table class=${available ? undefined : 'data chart-table'}>
    <caption class="vh">
      ${title}
    </caption>
    <thead>
      <tr>
        <th scope="col">${rowHeader}</th>
        ${series.map((s) => html`<th scope="col">${s.label}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${labels.map(
        (label, i) =>
          html`<tr>
            <th scope="row">${rowLabels ? rowLabels[i] : label}</th>
            ${series.map((s) => html`<td>${s.data[i]}</td>`)}
          </tr>`,
      )}
    </tbody>
  </table>`;
  return html`<div class="chart-block">
    ${
      available &&
      html`<div
        class=${horizontal ? 'chart chart-horizontal' : 'chart'}
        style=${horizontal ? { '--bars': String(labels.length) } : undefined}
      >
        <canvas ref=${canvas} role="img" aria-label=${summary}></canvas>
      </div>`
    }
    ${available ? html`<div class="vh">${table}</div>` : html`<${TableFrame}>${table}</${TableFrame}>`}
  </div>`;
}
