/**
 * A run's steps as bars on one time axis, from the run's start to its end (or now): which step took the
 * time, which ran side by side. Plain HTML: each bar's place is two CSS custom properties. The axis says when
 * it starts, and where it ends as the time since (`+41ms`, `+1m 05s`): a run under a second reads right, where
 * two times to the second would read the same.
 */
import { durationBetween, formatDuration, stepDepths } from '../format.js';
import { html, Time } from '../ui.js';

/**
 * What the timeline says of a step without times: one the run never reached; of a run in progress (whose steps
 * are shown from its checkpoints), one under way that a run written before they kept times is in, and those to come.
 * @type {Record<string, string>}
 */
const UNTIMED = {
  unreached: 'the run never reached it',
  running: 'under way',
  pending: 'not reached yet',
};

/** @param {number} x */
const clamp = (x) => Math.min(100, Math.max(0, x));

/** @param {{ run: any }} props */
export function Timeline({ run }) {
  /** @type {any[]} */
  const steps = run.steps ?? [];
  const depth = stepDepths(steps);
  if (!steps.length) return html`<p class="empty">No steps recorded yet.</p>`;
  const now = Date.now();
  const timed = steps.filter((s) => s.startedAt);
  const start = Math.min(Date.parse(run.startedAt), ...timed.map((s) => Date.parse(s.startedAt)));
  const end = Math.max(
    run.endedAt ? Date.parse(run.endedAt) : now,
    ...timed.map((s) => (s.endedAt ? Date.parse(s.endedAt) : now)),
  );
  const span = Math.max(end - start, 1);

  return html`<div class="timeline">
    <p class="timeline-axis">
      <span><${Time} iso=${new Date(start).toISOString()} /></span>
      <span>${run.endedAt ? html`<${Since} start=${start} end=${end} />` : 'now'}</span>
    </p>
    <ol>
      ${steps.map((s) => {
        if (!s.startedAt)
          return html`<li key=${s.id}>
            <span class="timeline-label mono" style=${`--depth: ${depth.get(s.id) ?? 0}`}>${s.id}</span>
            <span class="timeline-none">${UNTIMED[s.status] ?? 'no timing recorded'}</span>
          </li>`;
        const from = Date.parse(s.startedAt);
        const to = s.endedAt ? Date.parse(s.endedAt) : now;
        const left = Math.min(clamp(((from - start) / span) * 100), 99.5);
        const width = Math.max(clamp(((to - from) / span) * 100), 0.5);
        const duration = `${durationBetween(s.startedAt, s.endedAt)}${s.endedAt ? '' : ' so far'}`;
        return html`<li key=${s.id}>
          <span class="timeline-label mono" style=${`--depth: ${depth.get(s.id) ?? 0}`}>${s.id}</span>
          <span class="timeline-track">
            <span
              class=${`timeline-bar bar-${s.status}`}
              style=${{ '--left': `${left}%`, '--width': `${Math.min(width, 100 - left)}%` }}
              title=${`${s.startedAt} – ${s.endedAt ?? 'now'}`}
            ></span>
          </span>
          <span class="timeline-duration">${duration} · ${s.status}</span>
        </li>`;
      })}
    </ol>
  </div>`;
}

/**
 * The end of the axis as the time since its start (`+41ms`), the end's own UTC ISO in its title.
 * @param {{ start: number, end: number }} props
 */
function Since({ start, end }) {
  const iso = new Date(end).toISOString();
  return html`<time datetime=${iso} title=${iso}>+${formatDuration(end - start)}</time>`;
}
