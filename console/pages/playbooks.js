/**
 * `#/playbooks`: what each playbook listens to, when it fires next, whether it is valid, and a form to
 * start the ones that allow it by hand.
 */
import { useMemo } from 'preact/hooks';
import { enc } from '../api.js';
import { useApi } from '../hooks.js';
import { shortId } from '../format.js';
import { html, withCode, Alert, Badge, Heading, None, Time } from '../ui.js';
import { StartRun } from './start-run.js';

export function PlaybooksPage() {
  // Re-read now and then: the next fires move, and a playbook edited on disk is re-validated.
  const { data, error } = useApi('/playbooks', { interval: 30_000 });
  /** @type {any[]} */
  const playbooks = data?.playbooks ?? [];
  // The names the daemon masks as secrets, and what it shows in their place (src/util/secrets.ts SECRET_KEY and
  // MASK), for the run forms: the console holds no copy of either.
  const secrets = useMemo(
    () => ({
      name: typeof data?.secretName === 'string' ? new RegExp(data.secretName) : undefined,
      mask: typeof data?.mask === 'string' ? data.mask : undefined,
    }),
    [data?.secretName, data?.mask],
  );
  return html`<${Heading}>Playbooks</${Heading}>
    <${Alert} message=${error} />
    ${data && !playbooks.length && html`<p class="empty">No playbooks loaded.</p>`}
    ${playbooks.map(
      (p, i) => html`<${Playbook} key=${p.name} playbook=${p} secrets=${secrets} uid=${`pb${i}`} />`,
    )}`;
}

/**
 * @param {{ playbook: any, secrets: import('./start-run.js').Secrets, uid: string }} props
 * `uid` makes the ids this article's labels point at unique on the page, whatever the playbook's name.
 */
function Playbook({ playbook: p, secrets, uid }) {
  const { callback, schedule = [], manual } = p.triggers ?? {};
  /** @type {any[]} */
  const problems = p.problems ?? [];
  /** @type {any[]} */
  const recent = p.recentRuns ?? [];
  /** @type {string[]} */
  const nextFires = p.nextFires ?? [];

  return html`<article class="panel playbook" aria-labelledby=${`${uid}-name`}>
    <h2 id=${`${uid}-name`}>${p.name}</h2>
    <p class="mono muted path">${p.file}</p>
    <dl class="facts">
      <div>
        <dt>Callback</dt>
        <dd>${callback ? callbackText(callback) : html`<${None} />`}</dd>
      </div>
      <div>
        <dt>Schedules</dt>
        <dd>
          ${
            schedule.length
              ? html`<ul class="plain">
                  ${schedule.map(
                    (/** @type {any} */ s) =>
                      html`<li>
                        <code>${s.cron}</code
                        >${s.timezone && html` <span class="muted">(${s.timezone})</span>`}
                      </li>`,
                  )}
                </ul>`
              : html`<${None} />`
          }
        </dd>
      </div>
      <div>
        <dt>Manual</dt>
        <dd>${manual ? 'yes' : 'no'}</dd>
      </div>
      <div>
        <dt>Next fires</dt>
        <dd>
          ${
            nextFires.length
              ? html`<ul class="plain">
                  ${nextFires.map((t) => html`<li><${Time} iso=${t} /></li>`)}
                </ul>`
              : html`<${None} />`
          }
        </dd>
      </div>
    </dl>
    <h3>Validation</h3>
    ${
      problems.length
        ? html`<ul class="problems">
            ${problems.map(
              (/** @type {any} */ x) =>
                html`<li>
                  <${Badge} value=${x.severity} />
                  <span><code>${x.file}:${x.line}:${x.col}</code>: ${withCode(x.message)} [${x.rule}]</span>
                </li>`,
            )}
          </ul>`
        : html`<p><span class="badge badge-valid">Valid</span></p>`
    }
    <h3>Recent runs</h3>
    ${
      recent.length
        ? html`<ul class="plain recent-runs">
            ${recent.map(
              (/** @type {any} */ r) =>
                html`<li>
                  <a class="mono" href=${`#/runs/${enc(r.id)}`} title=${r.id}>${shortId(r.id)}</a>
                  <${Badge} value=${r.status} />
                  <${Time} iso=${r.startedAt} />
                </li>`,
            )}
          </ul>`
        : html`<p class="empty">No runs yet.</p>`
    }
    ${manual && html`<${StartRun} name=${p.name} inputs=${p.inputs ?? {}} secrets=${secrets} uid=${uid} />`}
  </article>`;
}

/**
 * `acme` or `acme (path /hooks/acme)`: the service, then whatever else the trigger names.
 * @param {Record<string, unknown>} callback
 */
function callbackText({ service, ...rest }) {
  const more = Object.entries(rest)
    .map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : v}`)
    .join(' · ');
  return html`service <code>${service}</code>${more && html` <span class="muted">(${more})</span>`}`;
}
