/** The sign-in form, shown in place of any page the daemon refused (401) until the token is given. */
import { useState } from 'preact/hooks';
import { signIn } from './api.js';
import { html, Heading, Alert } from './ui.js';

/**
 * @param {{ error: string | null, reason: string | null, onSignedIn: () => void, onBack?: (() => void) | null }} props
 * `error`: why the token in the address (`#token=`) was refused, if it was. `reason`: why the form is asked
 * for, when an action asked for it (starting or cancelling a run on a console read without signing in).
 * `onBack`: back to the page without signing in, the action forgotten (when an action asked).
 */
export function SignIn({ error: initial, reason, onSignedIn, onBack }) {
  const [error, setError] = useState(initial);
  const [busy, setBusy] = useState(false);

  /** @param {SubmitEvent} e */
  const submit = async (e) => {
    e.preventDefault();
    const form = /** @type {HTMLFormElement} */ (e.currentTarget);
    const token = /** @type {HTMLInputElement} */ (form.elements.namedItem('token')).value;
    setBusy(true);
    setError(null);
    try {
      await signIn(token);
      onSignedIn();
    } catch (err) {
      setError(/** @type {Error} */ (err).message);
      setBusy(false);
    }
  };

  return html`<${Heading}>Sign in</${Heading}>
    ${reason && html`<p class="notice" role="status">${reason}</p>`}
    <p class="lead">
      The console needs its token: the daemon's <code>FLEETBOOK_CONSOLE_TOKEN</code>, or the one in the address
      it printed at start (<code>fleetbook serve: console at http://…/#token=…</code>).
    </p>
    <form class="signin" onSubmit=${submit}>
      <${Alert} message=${error} />
      <div class="field">
        <label for="console-token">Console token</label>
        <input id="console-token" name="token" type="password" autocomplete="current-password" required />
      </div>
      <div class="form-actions">
        <button type="submit" class="primary" disabled=${busy}>Sign in</button>
        ${onBack && html`<button type="button" onClick=${onBack}>Back without signing in</button>`}
      </div>
    </form>`;
}
