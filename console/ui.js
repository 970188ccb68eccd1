/** The small pieces every page is made of, so that a status or a time looks the same everywhere. */
import { h } from 'preact';
import htm from 'htm';
import { formatTime } from './format.js';

export const html = htm.bind(h);

/**
 * A run status, a device outcome or a problem's severity. The word is always written: the color only
 * repeats it.
 * @param {{ value: string | undefined }} props
 */
export function Badge({ value }) {
  if (!value) return html`<${None} />`;
  return html`<span class=${`badge badge-${value}`}>${value}</span>`;
}

/**
 * A time in the reader's locale, the UTC ISO in the title.
 * @param {{ iso: string | undefined }} props
 */
export function Time({ iso }) {
  if (!iso) return html`<${None} />`;
  return html`<time datetime=${iso} title=${iso}>${formatTime(iso)}</time>`;
}

/** A cell with nothing to show, a dash rather than a blank that reads as still loading. */
export function None() {
  return html`<span class="none">—</span>`;
}

/**
 * What went wrong, where the operator will see it and a screen reader will say it. Absent when nothing did.
 * @param {{ message: string | null | undefined }} props
 */
export function Alert({ message }) {
  if (!message) return null;
  return html`<p class="alert" role="alert">${withCode(message)}</p>`;
}

/**
 * A message of the daemon's with its backticked spans shown as code (``input `sensors`: …``, ``run `fleetbook
 * runs cancel …` ``), as the command line prints them between backticks. Every place the console shows the
 * daemon's words goes through it. A backtick without a pair on its line stays as it is.
 * @param {string} text
 */
export function withCode(text) {
  /** @type {any[]} */
  const out = [];
  let last = 0;
  for (const m of text.matchAll(/`([^`\n]+)`/g)) {
    out.push(text.slice(last, m.index), html`<code>${m[1]}</code>`);
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

/**
 * A page's h1. It takes focus on navigation (the router focuses `#main h1`), hence the tabindex.
 * @param {{ children: any }} props
 */
export function Heading({ children }) {
  return html`<h1 tabindex="-1">${children}</h1>`;
}

/**
 * A row spanning the table that says why it is empty, instead of a bare header.
 * @param {{ cols: number, children: any }} props
 */
export function EmptyRow({ cols, children }) {
  return html`<tr>
    <td colspan=${cols} class="empty">${children}</td>
  </tr>`;
}

/**
 * `12/1 of 13`: succeeded/failed of total, the counts the runs list has room for.
 * @param {{ devices: { total: number, succeeded: number, failed: number } | undefined }} props
 */
export function DeviceTally({ devices }) {
  if (!devices) return html`<${None} />`;
  const { total = 0, succeeded = 0, failed = 0 } = devices;
  return html`<span class="tally" title=${`${succeeded} succeeded, ${failed} failed, of ${total} devices`}
    >${succeeded}/${failed} of ${total}</span
  >`;
}
