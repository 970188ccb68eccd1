/* global location */
/**
 * The form that starts a playbook by hand (`on.manual`): one field per declared input, typed like the input,
 * prefilled with its default. The daemon validates the inputs: this form reads a number field's text as a number,
 * and sends a list's or an object's as typed, for the daemon to read as JSON and say in the form's words what is
 * wrong with it (src/console/form-wording.ts).
 */
import { useState } from 'preact/hooks';
import { api, enc } from '../api.js';
import { html, Alert } from '../ui.js';

/**
 * An input's type as one word: the first of a list (`["string", "null"]`), `string` when undeclared.
 * @param {any} spec
 */
function kindOf(spec) {
  const t = Array.isArray(spec?.type)
    ? spec.type.find((/** @type {string} */ x) => x !== 'null')
    : spec?.type;
  return typeof t === 'string' ? t : 'string';
}

/**
 * The value of one field, or undefined to leave the input out (an empty field: the daemon then applies the
 * input's default or names it as missing).
 * @param {HTMLInputElement | HTMLTextAreaElement} el
 * @param {string} name
 * @param {string} kind
 */
function readField(el, name, kind) {
  if (kind === 'boolean') return /** @type {HTMLInputElement} */ (el).checked;
  const what = kind === 'integer' ? 'an integer' : 'a number';
  // A number field holding text that is no number (`1e`, `12abc`) has the value '': it would read as an empty
  // field, and the run would start with the input's default instead of what was typed.
  if (/** @type {HTMLInputElement} */ (el).validity.badInput)
    throw new Error(`Input ${name}: what is typed is not ${what}.`);
  const text = el.value;
  if (text.trim() === '') return undefined;
  if (kind === 'integer' || kind === 'number') {
    const n = Number(text);
    if (!Number.isFinite(n) || (kind === 'integer' && !Number.isInteger(n)))
      throw new Error(`Input ${name}: ${text} is not ${what}.`);
    return n;
  }
  // A list or an object goes as typed: the daemon reads text as JSON for such an input, as it reads `--input`.
  return text;
}

/**
 * @param {{ name: string, inputs: Record<string, any>, uid: string }} props
 * `uid` prefixes the ids of the fields, unique on the page.
 */
export function StartRun({ name, inputs, uid }) {
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);
  const fields = Object.entries(inputs).map(([input, spec], i) => ({
    input,
    spec,
    kind: kindOf(spec),
    id: `${uid}-in${i}`,
  }));

  /** @param {SubmitEvent} e */
  const submit = async (e) => {
    e.preventDefault();
    const form = /** @type {HTMLFormElement} */ (e.currentTarget);
    setError(null);
    /** @type {Record<string, unknown>} */
    const values = {};
    try {
      for (const f of fields) {
        const el = /** @type {HTMLInputElement} */ (form.querySelector(`#${f.id}`));
        const value = readField(el, f.input, f.kind);
        if (value !== undefined) values[f.input] = value;
      }
    } catch (err) {
      setError(/** @type {Error} */ (err).message);
      return;
    }
    setBusy(true);
    try {
      const { runId } = await api(`/playbooks/${enc(name)}/runs`, {
        method: 'POST',
        body: { inputs: values },
      });
      location.hash = `#/runs/${enc(runId)}`;
    } catch (err) {
      setError(/** @type {Error} */ (err).message);
      setBusy(false);
    }
  };

  return html`<form class="start-run" aria-labelledby=${`${uid}-start`} onSubmit=${submit} novalidate>
    <h3 id=${`${uid}-start`}>Start ${name}</h3>
    <${Alert} message=${error} />
    ${!fields.length && html`<p class="muted">This playbook takes no inputs.</p>`}
    ${fields.map((f) => html`<${Field} ...${f} />`)}
    <button type="submit" class="primary" disabled=${busy}>Start run</button>
  </form>`;
}

/** @param {{ input: string, spec: any, kind: string, id: string }} props */
function Field({ input, spec, kind, id }) {
  const help = `${id}-help`;
  // The type goes in the help text: the label is the input's name, as the playbook spells it.
  const type = kind === 'array' || kind === 'object' ? `${kind}, as JSON` : kind;
  const dflt = spec?.default;
  let control;
  if (kind === 'boolean')
    control = html`<input
      id=${id}
      type="checkbox"
      defaultChecked=${dflt === true}
      aria-describedby=${help}
    />`;
  else if (kind === 'array' || kind === 'object')
    control = html`<textarea
      id=${id}
      rows="3"
      spellcheck="false"
      defaultValue=${dflt === undefined ? '' : JSON.stringify(dflt, null, 2)}
      aria-describedby=${help}
    ></textarea>`;
  else
    control = html`<input
      id=${id}
      type=${kind === 'integer' || kind === 'number' ? 'number' : 'text'}
      step=${kind === 'integer' ? '1' : kind === 'number' ? 'any' : undefined}
      defaultValue=${dflt === undefined ? '' : String(dflt)}
      aria-describedby=${help}
    />`;
  return html`<div class=${kind === 'boolean' ? 'field field-check' : 'field'}>
    <label for=${id}>${input}</label>
    ${control}
    <p id=${help} class="help">${type}${spec?.description ? ` · ${spec.description}` : ''}</p>
  </div>`;
}
