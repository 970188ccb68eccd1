/** What a run's expressions read from the process's environment: `secrets.X` and `env.X`. */
import { SECRET_PREFIX, envWithheld, registerSecret } from '../util/secrets.js';

/**
 * Secrets for `${{ secrets.X }}`: the variables FLEETBOOK_SECRET_X. One set empty (a deployment's
 * `$UNSET_VARIABLE`) is not set: a run that needs it is refused before it acts, rather than fail at its step.
 */
export function secretsFromEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (k.startsWith(SECRET_PREFIX) && v !== undefined && v !== '') {
      out[k.slice(SECRET_PREFIX.length)] = v;
      registerSecret(v);
    }
  }
  return out;
}

/** `${{ env.X }}`: the environment, without fleetbook's own variables and anything named like a secret. */
export function envForExpressions(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && envWithheld(k) === undefined) out[k] = v;
  }
  return out;
}
