/* global ResizeObserver */
/** The small pieces every page is made of, so that a status or a time looks the same everywhere. */
import { h } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { formatTime, returned } from './format.js';

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

/**
 * What a step returned for a device (format.js `returned`), in a table's cell: a location's radius and cache on a
 * line beneath it, so that the cell stays narrow.
 * @param {{ data: unknown }} props
 */
export function Returned({ data }) {
  if (data === undefined) return html`<${None} />`;
  const [line, beneath] = returned(data);
  return html`${line}${beneath && html`<span class="muted under">${beneath}</span>`}`;
}

/**
 * A device's outcome in a table's cell: its badge, and its attempts beneath when more than one (a retried send).
 * @param {{ outcome: string, attempts: number }} props
 */
export function Outcome({ outcome, attempts }) {
  return html`<${Badge}
      value=${outcome}
    />${attempts > 1 && html`<span class="muted under">${attempts} attempts</span>`}`;
}

/**
 * A device's error type in a table's cell, the type's class beneath it.
 * @param {{ type: string | undefined, errorClass: string | undefined }} props
 */
export function ErrorType({ type, errorClass }) {
  if (!type) return html`<${None} />`;
  return html`${type}${errorClass && html`<span class="muted under">${errorClass}</span>`}`;
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
 * daemon's words goes through it. A span is paired as the messages write it: it opens after a space or
 * punctuation, and closes before one (a backtick before a letter is inside it), on one line. A value the daemon
 * quotes, as JSON writes a string (`"a`b"`), is text whatever it holds. A backtick without a pair stays as it is.
 * The parts are text and `<code>` elements of text: nothing in the message is read as markup.
 * @param {string} text
 */
export function withCode(text) {
  /** @type {any[]} */
  const out = [];
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = quoteEnd(text, i);
      if (end !== undefined) i = end;
    } else if (c === '`' && (i === 0 || !WORD.test(text[i - 1] ?? ''))) {
      const end = codeEnd(text, i);
      if (end === undefined) continue;
      out.push(text.slice(last, i), html`<code>${text.slice(i + 1, end)}</code>`);
      last = end + 1;
      i = end;
    }
  }
  out.push(text.slice(last));
  return out;
}

/** What a backtick that opens a span may not follow: a letter, a digit, or another backtick. */
const WORD = /[\p{L}\p{N}_`]/u;
/** What may come after a backtick that closes a span: the end, a space, or punctuation that ends a phrase. */
const AFTER_CODE = /^(?:$|[\s:,.;!?)\]}'"])/;

/**
 * The index of the backtick that closes the span opened at `start`, or undefined: the first on its line with
 * something before it, and after it what AFTER_CODE takes.
 * @param {string} text
 * @param {number} start
 */
function codeEnd(text, start) {
  for (let j = start + 2; j < text.length && text[j] !== '\n'; j++)
    if (text[j] === '`' && AFTER_CODE.test(text.slice(j + 1, j + 2))) return j;
  return undefined;
}

/**
 * The index of the quote that closes the string opened at `start` (a backslash escapes the character after it),
 * or undefined when none does on its line: a lone quote is text.
 * @param {string} text
 * @param {number} start
 */
function quoteEnd(text, start) {
  for (let j = start + 1; j < text.length && text[j] !== '\n'; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j;
  }
  return undefined;
}

/**
 * A page's h1. It takes focus on navigation (the router focuses `#main h1`), hence the tabindex.
 * @param {{ children: any }} props
 */
export function Heading({ children }) {
  return html`<h1 tabindex="-1">${children}</h1>`;
}

/**
 * A data table's frame. A table wider than the page (many columns, a narrow screen) scrolls sideways in its frame,
 * the page around it still; a table found to fit does not, so that its header stays in view as the page scrolls
 * down (a frame that scrolls is where a sticky header sticks). Until it is measured, the frame scrolls: the page
 * never does, even for a moment. Ids, times and badges stay whole either way.
 * @param {{ children: any }} props
 */
export function TableFrame({ children }) {
  const frame = useRef(/** @type {HTMLDivElement | null} */ (null));
  const [fits, setFits] = useState(false);
  // scrollWidth counts what overflows a frame that does not scroll too.
  const fit = () => {
    const el = frame.current;
    if (el) setFits(el.scrollWidth <= el.clientWidth);
  };
  // Measured after each render (new rows, a table made anew), and as the frame's width follows the window's.
  useLayoutEffect(fit);
  useLayoutEffect(() => {
    const el = frame.current;
    if (!el) return undefined;
    const seen = new ResizeObserver(fit);
    seen.observe(el);
    return () => seen.disconnect();
  }, []);
  return html`<div ref=${frame} class=${fits ? 'table-frame fits' : 'table-frame'}>${children}</div>`;
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
