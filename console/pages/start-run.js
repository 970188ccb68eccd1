/* global location, requestAnimationFrame */
/**
 * The form that starts a playbook by hand (`on.manual`): one field per declared input, typed like the input,
 * prefilled with its default. The daemon validates the inputs: this form reads a number field's text as a number,
 * and sends a list's or an object's as typed, for the daemon to read as JSON and say in the form's words what is
 * wrong with it (src/console/form-wording.ts).
 *
 * The daemon serves the values of an input named like a secret masked (`***`, its mask), as it masks a run's
 * inputs, and so the secrets in a default (src/console/views.ts): such a field is a password field (a list's or
 * an object's, a textarea whose text is hidden the same way), empty, its default applied by the daemon when it is
 * left empty; a field prefilled with a masked default and left as it is is left out of the run too, for the
 * daemon to apply the real default.
 *
 * A field says what its value breaks of the constraints the browser knows (`min`, `max`, `minlength`, `pattern`)
 * once it is left, and then as it is typed until it fits. It does not stop the start: the form is `novalidate`,
 * and the daemon, which holds the run to every constraint, has the last word.
 *
 * "Dry run", off unless chosen, starts the run as `fleetbook run --dry-run` does: the calls that only read are
 * made, none that changes anything, and the run's page lists the calls it would make. The choice is kept with the
 * form over a sign-in: lost, the start after it would act on the fleet.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { enc } from '../api.js';
import { html, Alert } from '../ui.js';
import { holdsSecret, keepStart, send, takeStart } from '../pending.js';

/**
 * What the daemon says of its secrets, served with the playbooks: `name`, the names it masks (src/util/secrets.ts
 * SECRET_KEY), for the keys of the JSON typed in a field (pending.js); `mask`, what it serves in a secret's place
 * (MASK).
 * @typedef {{ name: RegExp | undefined, mask: string | undefined }} Secrets
 */

/**
 * The typed text (a checkbox: whether it is checked) of each field, by input.
 * @param {HTMLFormElement} form
 * @param {{ input: string, id: string }[]} fields
 */
function typed(form, fields) {
  return Object.fromEntries(
    fields.map((f) => {
      const el = /** @type {HTMLInputElement} */ (form.querySelector(`#${f.id}`));
      return [f.input, el.type === 'checkbox' ? el.checked : el.value];
    }),
  );
}

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
 * The text a field starts with but for what was typed before signing in: its default, none for a secret.
 * @param {any} spec
 * @param {string} kind
 * @param {boolean} secret
 */
function initialText(spec, kind, secret) {
  const dflt = spec?.default;
  if (secret || dflt === undefined || kind === 'boolean') return '';
  return kind === 'array' || kind === 'object' ? JSON.stringify(dflt, null, 2) : String(dflt);
}

/**
 * What an input's constraints take, in words for the field's help text (the daemon holds the run to them and
 * says which one a value breaks): `1 to 10`, `matching ^[a-z]+$`, `one of "a", "b"`, `1 to 50 items`,
 * `each string matching …`, `no item twice`.
 * @param {any} spec
 */
export function constraintNotes(spec) {
  /** @param {any} min @param {any} max @param {string} unit of one (`item`), none for a number */
  const range = (min, max, unit = '') => {
    const of = (/** @type {number} */ n) => (unit && n !== 1 ? ` ${unit}s` : unit && ` ${unit}`);
    if (typeof min === 'number' && typeof max === 'number') return `${min} to ${max}${of(max)}`;
    if (typeof min === 'number') return `at least ${min}${of(min)}`;
    if (typeof max === 'number') return `at most ${max}${of(max)}`;
    return undefined;
  };
  /** @param {any} s */
  const value = (s) =>
    [
      typeof s?.pattern === 'string' ? `matching ${s.pattern}` : undefined,
      range(s?.minimum, s?.maximum),
      Array.isArray(s?.enum)
        ? `one of ${s.enum.map((/** @type {unknown} */ v) => JSON.stringify(v)).join(', ')}`
        : undefined,
      range(s?.minLength, s?.maxLength, 'character'),
    ].filter(Boolean);
  const items = spec?.items && typeof spec.items === 'object' ? spec.items : undefined;
  return [
    ...value(spec),
    range(spec?.minItems, spec?.maxItems, 'item'),
    items ? `each ${items.type ?? 'item'} ${value(items).join(', ')}`.trimEnd() : undefined,
    spec?.uniqueItems === true ? 'no item twice' : undefined,
  ].filter(Boolean);
}

/**
 * The `pattern` attribute for an input's RE2 `pattern`, or undefined when the browser would read it otherwise.
 * The browser matches the whole text, as `^(?:pattern)$` with the `v` flag: that means what RE2 means (a match
 * anywhere) only for a pattern anchored at both ends, with no `|` outside a group. Left out too: what is not
 * JavaScript, and what both read but differently: `\s` and `\S` (JavaScript's take every Unicode space), `.`
 * (JavaScript's leaves out U+2028 and U+2029 as well), `\p`, a `(?` group other than `(?:`, and in a class a
 * `[` (a POSIX class for RE2, a nested class for `v`), `--` or `&&` (set operations for `v`). The daemon holds
 * the value to the pattern whatever the browser makes of it.
 * @param {unknown} pattern
 */
export function htmlPattern(pattern) {
  if (typeof pattern !== 'string' || !pattern.startsWith('^') || !pattern.endsWith('$')) return undefined;
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    const next = pattern[i + 1] ?? '';
    if (c === '\\') {
      if ('sSpP'.includes(next)) return undefined;
      // The closing `$` escaped is a literal dollar, not an anchor.
      if (i + 1 === pattern.length - 1) return undefined;
      i++;
    } else if (inClass) {
      if (c === '[' || (c === '-' && next === '-') || (c === '&' && next === '&')) return undefined;
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
      if (next === '^') i++;
      // `[]a]` holds `]` for RE2; JavaScript reads `[]` as an empty class.
      if (pattern[i + 1] === ']') return undefined;
    } else if (c === '.') return undefined;
    else if (c === '(') {
      if (next === '?' && pattern[i + 2] !== ':') return undefined;
      depth++;
    } else if (c === ')') depth--;
    else if (c === '|' && depth === 0) return undefined;
  }
  try {
    new RegExp(`^(?:${pattern})$`, 'v');
  } catch {
    return undefined;
  }
  return pattern;
}

/**
 * @param {{ name: string, inputs: Record<string, any>, secrets: Secrets, uid: string }} props
 * `uid` prefixes the ids of the fields, unique on the page.
 */
export function StartRun({ name, inputs, secrets, uid }) {
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);
  const { mask } = secrets;
  // The form of a start refused before signing in (console/pending.js), taken once: a later visit, or a reload,
  // shows the defaults again. The run is not started by itself: minutes may have passed, and it acts on the fleet.
  const [taken] = useState(() => takeStart(name));
  const given = taken?.values;
  const dryId = `${uid}-dry`;
  const [givenBack, setGivenBack] = useState(taken !== undefined);
  const heading = useRef(/** @type {HTMLHeadingElement | null} */ (null));
  const fields = Object.entries(inputs).map(([input, spec], i) => {
    const kind = kindOf(spec);
    // The daemon says which inputs are named like a secret (not a checkbox: true or false hides nothing).
    const secret = spec.secret === true;
    const initial = initialText(spec, kind, secret);
    return {
      input,
      spec,
      kind,
      secret,
      initial,
      // The default shown holds a secret the daemon masked: sent as shown, the run would get `***`. A secret's
      // field shows no default at all: left empty, it is left out.
      masked: spec.masked === true && !secret,
      mask,
      id: `${uid}-in${i}`,
      given: given?.[input],
    };
  });

  // The form given back is where the operator left off: focus goes there, after the shell's focus on the h1.
  useEffect(() => {
    if (givenBack) requestAnimationFrame(() => heading.current?.focus());
  }, []);

  /** @param {SubmitEvent} e */
  const submit = async (e) => {
    e.preventDefault();
    const form = /** @type {HTMLFormElement} */ (e.currentTarget);
    setError(null);
    setGivenBack(false);
    // Each field says what its value breaks, if anything (Field: `invalid`), as it does once left; the daemon says
    // whether it starts the run.
    form.checkValidity();
    /** @type {Record<string, unknown>} */
    const values = {};
    try {
      for (const f of fields) {
        const el = /** @type {HTMLInputElement} */ (form.querySelector(`#${f.id}`));
        if (f.masked && el.value === f.initial) continue;
        if (f.masked && mask && el.value.includes(mask))
          throw new Error(
            `Input ${f.input}: ${mask} stands for a secret of its default, not shown. Type the whole value, or put the default back to use it.`,
          );
        const value = readField(el, f.input, f.kind);
        if (value !== undefined) values[f.input] = value;
      }
    } catch (err) {
      setError(/** @type {Error} */ (err).message);
      return;
    }
    // Kept as asked (console/pending.js): a 401 brings the sign-in form, which says why, and takes the form away
    // until signed in. A field named like a secret, or whose JSON holds one, stays in this page's memory only.
    const filled = typed(form, fields);
    const dryRun = /** @type {HTMLInputElement} */ (form.querySelector(`#${dryId}`)).checked;
    await send({
      keep: () =>
        keepStart({
          playbook: name,
          typed: filled,
          withheld: fields
            .filter((f) => f.secret || holdsSecret(filled[f.input], secrets.name))
            .map((f) => f.input),
          dryRun,
          hash: location.hash,
          reason: `Starting a ${dryRun ? 'dry run' : 'run'} needs signing in. Once signed in, you find the form of ${name} as you filled it, to start the run.`,
        }),
      path: `/playbooks/${enc(name)}/runs`,
      body: dryRun ? { inputs: values, dryRun } : { inputs: values },
      busy: setBusy,
      answered: ({ runId }) => {
        location.hash = `#/runs/${enc(runId)}`;
      },
      failed: setError,
    });
  };

  return html`<form class="start-run" aria-labelledby=${`${uid}-start`} onSubmit=${submit} novalidate>
    <h3 id=${`${uid}-start`} tabindex="-1" ref=${heading}>Start ${name}</h3>
    ${
      givenBack &&
      html`<p class="notice" role="status">
        Signed in. The run is not started yet: check its inputs, then start
        it.${taken?.retype ? ` ${taken.retype}` : ''}
      </p>`
    }
    <${Alert} message=${error} />
    ${!fields.length && html`<p class="muted">This playbook takes no inputs.</p>`}
    ${fields.map((f) => html`<${Field} ...${f} />`)}
    <div class="field field-check dry-run">
      <input
        id=${dryId}
        type="checkbox"
        defaultChecked=${taken?.dryRun === true}
        aria-describedby=${`${dryId}-help`}
      />
      <label for=${dryId}>Dry run</label>
      <p id=${`${dryId}-help`} class="help">
        Makes the calls that only read and none that changes anything; the run's page lists the calls it would
        make.
      </p>
    </div>
    <button type="submit" class="primary" disabled=${busy}>Start run</button>
  </form>`;
}

/**
 * The attributes the browser knows of an input's constraints: `min` and `max` on a number's field; `minlength`
 * and `pattern` (htmlPattern) on a text's. No `maxlength`: the browser counts UTF-16 units and stops the typing
 * there, where the daemon counts characters (code points), so a value the daemon takes (`😀😀` for a
 * `maxLength` of 2) could not be typed. The form is `novalidate`: a field says what its value breaks of them
 * (problemOf), and the daemon whether the run starts.
 * @param {any} spec
 * @param {string} kind
 */
function bounds(spec, kind) {
  /** @type {Record<string, string | number>} */
  const out = {};
  const num = (/** @type {unknown} */ n) => typeof n === 'number' && Number.isFinite(n);
  if (kind === 'integer' || kind === 'number') {
    if (num(spec?.minimum)) out.min = spec.minimum;
    if (num(spec?.maximum)) out.max = spec.maximum;
  } else if (kind === 'string') {
    if (num(spec?.minLength)) out.minlength = spec.minLength;
    const pattern = htmlPattern(spec?.pattern);
    if (pattern !== undefined) out.pattern = pattern;
  }
  return out;
}

/**
 * What the value of a field breaks of the constraints its attributes give the browser (bounds), as the field says
 * it: a text, and the pattern as code; null when nothing, or when the browser knows nothing of it (an empty field,
 * a list's text: a textarea has no such attributes).
 * @param {HTMLInputElement | HTMLTextAreaElement} el
 * @param {string} kind
 * @returns {{ text: string, code?: string } | null}
 */
function problemOf(el, kind) {
  const v = el.validity;
  if (!v) return null;
  if (kind === 'integer' || kind === 'number') {
    const what = kind === 'integer' ? 'an integer' : 'a number';
    if (v.badInput) return { text: `Must be ${what}.` };
    if (el.value === '') return null;
    // Not `stepMismatch`: its steps count from `min`, which need not be an integer.
    if (kind === 'integer' && !Number.isInteger(Number(el.value))) return { text: `Must be ${what}.` };
    if (v.rangeUnderflow) return { text: `Must be at least ${el.min}.` };
    if (v.rangeOverflow) return { text: `Must be at most ${el.max}.` };
    return null;
  }
  if (v.tooShort) return { text: `Must be at least ${el.minLength} characters.` };
  if (v.patternMismatch) return { text: 'Must match', code: el.pattern };
  return null;
}

/**
 * The button that shows what is typed in a secret's field, and hides it again.
 * @param {{ input: string, id: string, shown: boolean, toggle: () => void }} props
 */
function ShowButton({ input, id, shown, toggle }) {
  return html`<button
    type="button"
    aria-label=${`Show ${input}`}
    aria-controls=${id}
    aria-pressed=${shown ? 'true' : 'false'}
    onClick=${toggle}
  >
    Show
  </button>`;
}

/**
 * @param {{ input: string, spec: any, kind: string, secret: boolean, initial: string, masked: boolean,
 *   mask: string | undefined, id: string, given: string | boolean | undefined }} props
 * `secret`: named like one, a password field; `initial`: its text but for `given`, what was typed in the field
 * before signing in.
 */
function Field({ input, spec, kind, secret, initial, masked, mask, id, given }) {
  const help = `${id}-help`;
  const said = `${id}-problem`;
  const [shown, setShown] = useState(false);
  const [problem, setProblem] = useState(/** @type {{ text: string, code?: string } | null} */ (null));
  // The type goes in the help text: the label is the input's name, as the playbook spells it.
  const json = kind === 'array' || kind === 'object';
  const type = json ? `${kind}, as JSON` : kind;
  const text = typeof given === 'string' ? given : initial;
  const notes = [
    type,
    spec?.description,
    // A secret's enum is served masked: no use saying it.
    ...constraintNotes(secret ? { ...spec, enum: undefined } : spec),
    secret && spec?.default !== undefined
      ? 'It has a default, not shown: leave the field empty to use it.'
      : undefined,
    masked
      ? `${mask} stands for a secret of the default, not shown: leave the field as it is to use it.`
      : undefined,
  ].filter(Boolean);
  /**
   * What the value breaks, said once the field is left (or the form sent: `invalid`), then as it is typed.
   * @param {Event} e
   * @param {boolean} now
   */
  const check = (e, now) => {
    if (now || problem) setProblem(problemOf(/** @type {HTMLInputElement} */ (e.currentTarget), kind));
  };
  // What every field but a checkbox shares: its help, and what its value breaks.
  const common = {
    id,
    'aria-describedby': problem ? `${help} ${said}` : help,
    'aria-invalid': problem ? 'true' : undefined,
    onBlur: (/** @type {Event} */ e) => check(e, true),
    onInvalid: (/** @type {Event} */ e) => check(e, true),
    onInput: (/** @type {Event} */ e) => check(e, false),
  };
  const toggle = () => setShown(!shown);
  let control;
  if (kind === 'boolean')
    control = html`<input
      id=${id}
      type="checkbox"
      defaultChecked=${given === undefined ? spec?.default === true : given === true}
      aria-describedby=${help}
    />`;
  else if (secret && json)
    // JSON takes lines: a textarea, its text hidden as a password field's (dots) unless asked for.
    control = html`<div class="secret-input secret-json">
      <textarea
        ...${common}
        class=${shown ? undefined : 'concealed'}
        rows="3"
        autocomplete="off"
        autocapitalize="off"
        spellcheck="false"
        defaultValue=${text}
      ></textarea>
      <${ShowButton} input=${input} id=${id} shown=${shown} toggle=${toggle} />
    </div>`;
  else if (secret)
    // What is typed stays off the screen (and out of the browser's saved passwords) unless asked for.
    control = html`<div class="secret-input">
      <input
        ...${common}
        type=${shown ? 'text' : 'password'}
        autocomplete="new-password"
        autocapitalize="off"
        spellcheck="false"
        defaultValue=${text}
        ...${bounds(spec, kind)}
      />
      <${ShowButton} input=${input} id=${id} shown=${shown} toggle=${toggle} />
    </div>`;
  else if (json)
    control = html`<textarea ...${common} rows="3" spellcheck="false" defaultValue=${text}></textarea>`;
  else
    control = html`<input
      ...${common}
      type=${kind === 'integer' || kind === 'number' ? 'number' : 'text'}
      step=${kind === 'integer' ? '1' : kind === 'number' ? 'any' : undefined}
      defaultValue=${text}
      ...${bounds(spec, kind)}
    />`;
  return html`<div class=${kind === 'boolean' ? 'field field-check' : 'field'}>
    <label for=${id}>${input}</label>
    ${control}
    <p id=${help} class="help">${notes.join(' · ')}</p>
    ${
      kind !== 'boolean' &&
      html`<p id=${said} class="field-problem" aria-live="polite">
        ${problem && html`${problem.text}${problem.code !== undefined && html` <code>${problem.code}</code>.`}`}
      </p>`
    }
  </div>`;
}
