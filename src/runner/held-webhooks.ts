/**
 * What a process says at its start when it holds webhooks back (on its embedded emulator, actions/webhook.ts)
 * and its playbooks would have sent some: one line, naming the secrets and variables of `env` that a
 * `notify.webhook` step's `url` reads and that are set to a URL.
 */
import { EMULATOR_WEBHOOKS_SETTING } from '../actions/policy.js';
import type { WebhookPolicy } from '../actions/webhook.js';
import { readsIn } from '../expressions/reads.js';
import type { Playbook } from '../playbook/schema.js';
import { stepsIn } from './plan.js';

/** The line to say, or undefined: webhooks are sent, or no webhook URL of the playbooks is set to one. */
export function heldWebhooksNotice(
  policy: WebhookPolicy,
  playbooks: Iterable<Playbook>,
  secrets: Record<string, string>,
  env: Record<string, string>,
): string | undefined {
  if (!policy.heldBack) return undefined;
  const isUrl = (o: Record<string, string>, name: string) =>
    Object.hasOwn(o, name) && /^https?:\/\/./i.test((o[name] as string).trim());
  const named = new Set<string>();
  for (const pb of playbooks)
    for (const step of [...stepsIn(pb.steps), ...stepsIn(pb.finally)]) {
      if (!('uses' in step) || step.uses !== 'notify.webhook') continue;
      readsIn((step.with as Record<string, unknown> | undefined)?.url, (r) => {
        for (const s of r.secrets) if (isUrl(secrets, s)) named.add(`secrets.${s}`);
        for (const e of r.env) if (isUrl(env, e.name)) named.add(`env.${e.name}`);
      });
    }
  if (!named.size) return undefined;
  const names = [...named].sort();
  const list =
    names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)} are` : `${names[0]} is`;
  return `webhooks are held back on the embedded emulator: notify.webhook sends nothing (${list} set to ${names.length > 1 ? 'URLs' : 'a URL'}); ${EMULATOR_WEBHOOKS_SETTING}=send sends them`;
}
