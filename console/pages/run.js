/* global location, requestAnimationFrame */
/**
 * `#/runs/<id>`: one run, its steps, how long each took, how its devices fared. Kept current while the run
 * is queued or running (every 2 s, and at once when the stream says it changed). A dry run says it is one, and
 * lists the calls it would make (`planned`, so far while it runs) before its steps.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { enc } from '../api.js';
import { useApi } from '../hooks.js';
import { useRunStream } from '../stream.js';
import { durationBetween, prettyJson, shortId, stepDepths } from '../format.js';
import { html, withCode, Alert, Badge, EmptyRow, Heading, None, TableFrame, Time } from '../ui.js';
import { BarChart } from '../charts.js';
import { keepCancel, send, takeCancel } from '../pending.js';
import { Timeline } from './run-timeline.js';
import { RunDevices } from './run-devices.js';

/** @param {string | undefined} status */
const isActive = (status) => status === 'queued' || status === 'running';

/**
 * @param {{ id: string, params: URLSearchParams }} props
 * `params`: the hash's query, which holds the device table's filters and page.
 */
export function RunPage({ id, params }) {
  const [active, setActive] = useState(false);
  const { data, error, reload } = useApi(`/runs/${enc(id)}`, { interval: active ? 2000 : 0 });
  const run = data?.run;
  // A cancel of this run refused before signing in (console/pending.js), taken once: a later visit, or a reload,
  // says nothing of it. Taken here, not by the button: a run that ended meanwhile has none.
  const [cancelGivenBack] = useState(() => takeCancel(id));
  useEffect(() => setActive(isActive(run?.status)), [run?.status]);
  useRunStream((streamed) => {
    if (streamed.id === id) reload();
  });

  return html`<${Heading}>Run ${shortId(id)}${run ? ` · ${run.playbook}` : ''}</${Heading}>
    <p class="subtitle">Run id <code>${id}</code></p>
    <${Alert} message=${error} />
    ${
      run?.dryRun &&
      html`<p class="notice" role="note">
        This is a dry run: it makes the calls that only read, and sends none that changes anything. The calls
        it would make are listed under Planned calls.
      </p>`
    }
    ${
      run &&
      html`<${Facts} run=${run} cancelBy=${data.cancelBy} heldBy=${data.heldBy} />
        ${data.cancellable && html`<${CancelRun} id=${id} givenBack=${cancelGivenBack} onCancelled=${reload} />`}
        <div class="json-blocks">
          <details>
            <summary>Inputs</summary>
            <pre>${prettyJson(run.inputs ?? {})}</pre>
          </details>
          <details>
            <summary>Event</summary>
            ${run.event ? html`<pre>${prettyJson(run.event)}</pre>` : html`<p>No event: a callback did not start this run.</p>`}
          </details>
        </div>
        ${run.dryRun && html`<${Planned} planned=${run.planned} active=${isActive(run.status)} />`}
        <${Steps} steps=${run.steps ?? []} />
        <section aria-labelledby="timeline-title">
          <h2 id="timeline-title">Timeline</h2>
          <${Timeline} run=${run} />
        </section>
        <${ErrorChart} byError=${run.devices?.byError ?? {}} />
        <${RunDevices} run=${run} active=${active} params=${params} />`
    }`;
}

/**
 * `run.cancelRequested`, and what becomes of it in the words `fleetbook runs show` prints (the daemon's
 * `cancelBy.text`, src/store/lease.ts cancelTakerText), its commands between backticks shown as code.
 * @param {{ reason: string, by: { text?: string } | undefined }} props
 */
function PendingCancel({ reason, by }) {
  return by?.text ? html`${withCode(reason)}: ${withCode(by.text)}` : withCode(reason);
}

/**
 * What the Held by of a run not ended says when the daemon names no process that holds it (`heldBy`, as `fleetbook
 * runs list` names one): its process stopped, and a daemon on the store takes it up.
 */
const NO_HOLDER =
  'no process (the one that ran it stopped): the daemon takes it up at its next lease renewal';

/** @param {{ run: any, cancelBy: any, heldBy: string | undefined }} props */
function Facts({ run, cancelBy, heldBy }) {
  return html`<dl class="facts">
    <div>
      <dt>Status</dt>
      <dd><${Badge} value=${run.status} /></dd>
    </div>
    ${
      run.cancelRequested &&
      html`<div class="wide">
        <dt>Cancel requested</dt>
        <dd><${PendingCancel} reason=${run.cancelRequested} by=${cancelBy} /></dd>
      </div>`
    }
    <div>
      <dt>Trigger</dt>
      <dd>${run.triggerText && run.triggerText !== '-' ? run.triggerText : html`<${None} />`}</dd>
    </div>
    <div>
      <dt>Started</dt>
      <dd><${Time} iso=${run.startedAt} /></dd>
    </div>
    <div>
      <dt>Ended</dt>
      <dd><${Time} iso=${run.endedAt} /></dd>
    </div>
    <div>
      <dt>Duration</dt>
      <dd>${durationBetween(run.startedAt, run.endedAt)}${!run.endedAt && ' so far'}</dd>
    </div>
    ${
      isActive(run.status) &&
      html`<div class="wide">
        <dt>Held by</dt>
        <dd>${heldBy ? withCode(heldBy) : NO_HOLDER}</dd>
      </div>`
    }
    <div>
      <dt>Version</dt>
      <dd>${run.version ?? html`<${None} />`}</dd>
    </div>
    <div class="wide">
      <dt>Error</dt>
      <dd class=${run.error ? 'error-text' : ''}>${run.error ? withCode(run.error) : html`<${None} />`}</dd>
    </div>
  </dl>`;
}

/**
 * Two clicks to cancel, both on the same button, so a stray click does nothing and no modal dialog is
 * needed (and a test can drive it). Refused for want of a session (a console read without signing in, on
 * loopback), the sign-in form takes the page's place, and once signed in the page comes back (`givenBack`) saying
 * the run is not cancelled, for the operator to cancel it: not by itself, as the operator may no longer want it.
 * @param {{ id: string, givenBack: boolean, onCancelled: () => void }} props
 */
function CancelRun({ id, givenBack: given, onCancelled }) {
  const [step, setStep] = useState(/** @type {'idle' | 'confirm' | 'sending' | 'sent'} */ ('idle'));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [givenBack, setGivenBack] = useState(given);
  const button = useRef(/** @type {HTMLButtonElement | null} */ (null));

  // Focus goes where the operator left off, after the shell's focus on the h1.
  useEffect(() => {
    if (givenBack) requestAnimationFrame(() => button.current?.focus());
  }, []);

  const click = async () => {
    setGivenBack(false);
    if (step === 'idle') return setStep('confirm');
    setError(null);
    await send({
      // Kept as asked (console/pending.js): a 401 brings the sign-in form, which says why.
      keep: () =>
        keepCancel({
          run: id,
          hash: location.hash,
          reason: `Cancelling a run needs signing in. Once signed in, you are back on the page of run ${shortId(id)}, to cancel it.`,
        }),
      path: `/runs/${enc(id)}/cancel`,
      busy: (on) => setStep(on ? 'sending' : 'idle'),
      answered: () => {
        setStep('sent');
        onCancelled();
      },
      failed: setError,
    });
  };

  return html`<div class="actions">
    <${Alert} message=${error} />
    ${
      givenBack &&
      html`<p class="notice" role="status">
        Signed in. The run is not cancelled: cancel it again if you still want to.
      </p>`
    }
    <button
      type="button"
      class="danger"
      ref=${button}
      onClick=${click}
      disabled=${step === 'sending' || step === 'sent'}
    >
      ${step === 'idle' ? 'Cancel run' : step === 'confirm' ? 'Confirm cancel' : 'Cancelling…'}
    </button>
    ${step === 'confirm' && html`<button type="button" onClick=${() => setStep('idle')}>Keep running</button>`}
  </div>`;
}

const OUTCOMES = ['accepted', 'succeeded', 'failed', 'skipped', 'unconfirmed'];

/**
 * `13 total · 10 succeeded · 3 failed`: the outcomes with devices in them, so the steps table fits a
 * 1024 px screen without five mostly-zero columns.
 * @param {any} d DeviceCounts
 */
function deviceCounts(d) {
  if (!d) return html`<${None} />`;
  return [`${d.total ?? 0} total`, ...OUTCOMES.filter((o) => d[o]).map((o) => `${d[o]} ${o}`)].join(' · ');
}

/**
 * A dry run's planned calls: each step that would act, its action, how many calls it would make, and to how many
 * devices: those planned so far while it runs (its steps' checkpoints), its summary's once it has ended.
 * @param {{ planned: { step: string, action: string, calls: number, devices: number }[] | undefined,
 *   active: boolean }} props
 */
function Planned({ planned = [], active }) {
  return html`<section aria-labelledby="planned-title">
    <h2 id="planned-title">Planned calls</h2>
    <${TableFrame}><table class="data">
      <caption class="vh">
        Planned calls
      </caption>
      <thead>
        <tr>
          <th scope="col">Step</th>
          <th scope="col">Action</th>
          <th scope="col" class="num">Calls</th>
          <th scope="col" class="num">Devices</th>
        </tr>
      </thead>
      <tbody>
        ${planned.map(
          (p) =>
            html`<tr key=${p.step}>
              <th scope="row" class="mono">${p.step}</th>
              <td class="mono">${p.action}</td>
              <td class="num">${p.calls}</td>
              <td class="num">${p.devices}</td>
            </tr>`,
        )}
        ${
          !planned.length &&
          html`<${EmptyRow} cols=${4}>
            ${active ? 'None yet: no step so far would have changed anything.' : 'None: no step would have changed anything.'}
          </${EmptyRow}>`
        }
      </tbody>
    </table></${TableFrame}>
  </section>`;
}

/** @param {{ steps: any[] }} props */
function Steps({ steps }) {
  const depth = stepDepths(steps);
  return html`<section aria-labelledby="steps-title">
    <h2 id="steps-title">Steps</h2>
    <${TableFrame}><table class="data">
      <caption class="vh">
        Steps
      </caption>
      <thead>
        <tr>
          <th scope="col">Step</th>
          <th scope="col">Status</th>
          <th scope="col" class="num">Attempts</th>
          <th scope="col" class="num">Calls</th>
          <th scope="col">Devices</th>
          <th scope="col">Confirmation</th>
          <th scope="col">Note</th>
        </tr>
      </thead>
      <tbody>
        ${steps.map(
          (s) =>
            html`<tr key=${s.id}>
              <th
                scope="row"
                class="mono step"
                style=${`--depth: ${depth.get(s.id) ?? 0}`}
                title=${s.within ? `within ${s.within}` : undefined}
              >
                ${s.id}
              </th>
              <td><${Badge} value=${s.status} /></td>
              <td class="num">${s.attempts}</td>
              <td class="num">${s.calls}</td>
              <td class="wrap">${deviceCounts(s.devices)}</td>
              <td class="wrap">${confirmation(s.confirmation)}</td>
              <td class="wrap">${stepNote(s)}</td>
            </tr>`,
        )}
        ${!steps.length && html`<${EmptyRow} cols=${7}>No steps recorded yet.</${EmptyRow}>`}
      </tbody>
    </table></${TableFrame}>
  </section>`;
}

/**
 * Why a step failed, why a skipped step did nothing (its `if` was false, it was given no devices), or what it
 * made (a report's file and rows). An `unreached` step, one the run never entered, has nothing to say; nor has a
 * `pending` one, that a run in progress is still to come to.
 * @param {{ error?: string, reason?: string, note?: string }} s
 */
function stepNote(s) {
  if (s.error) return html`<span class="error-text">${withCode(s.error)}</span>`;
  const said = s.reason ?? s.note;
  return said ? html`<span class="muted">${withCode(said)}</span>` : '';
}

/**
 * How a step's results were confirmed: a count per way (callback, requestStatus, stateRead), one a line.
 * @param {unknown} c
 */
function confirmation(c) {
  if (c === undefined || c === null) return html`<${None} />`;
  if (typeof c !== 'object') return String(c);
  return html`<ul class="plain">
    ${Object.entries(c).map(([way, n]) => html`<li>${way} ${typeof n === 'object' ? JSON.stringify(n) : n}</li>`)}
  </ul>`;
}

/** @param {{ byError: Record<string, number> }} props */
function ErrorChart({ byError }) {
  const chart = useMemo(() => {
    const entries = Object.entries(byError).sort((a, b) => b[1] - a[1]);
    return {
      labels: entries.map(([k]) => k),
      series: [{ label: 'Devices', color: '--chart-failed', data: entries.map(([, n]) => n) }],
      summary: `Devices by error type: ${entries.map(([k, n]) => `${k} ${n}`).join(', ')}.`,
    };
    // Each poll brings a new object with, mostly, the same counts: redraw only when they change.
  }, [JSON.stringify(byError)]);

  return html`<section aria-labelledby="errors-title">
    <h2 id="errors-title">Outcomes by error type</h2>
    ${
      chart.labels.length
        ? html`<${BarChart}
            title="Outcomes by error type"
            summary=${chart.summary}
            labels=${chart.labels}
            series=${chart.series}
            rowHeader="Error type"
            horizontal
          />`
        : html`<p class="empty">No device errors</p>`
    }
  </section>`;
}
