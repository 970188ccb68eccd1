/**
 * What a process says of the webhooks it holds back (on its embedded emulator, actions/webhook.ts). At its start,
 * and when a reload brings a playbook that would send some: one line, naming the secrets and variables of `env`
 * that a `notify.webhook` step's `url` reads and that are set to a URL. And at each webhook held, as its step
 * fails: a warning for the first of each playbook, not for every page (the example playbook pages about once a
 * second on the emulator).
 */
import { EMULATOR_WEBHOOKS_SETTING, RefusedError } from '../actions/policy.js';
import type { WebhookPolicy } from '../actions/webhook.js';
import { readsIn } from '../expressions/reads.js';
import type { Logger } from '../log.js';
import type { Playbook } from '../playbook/schema.js';
import { stepsIn } from './plan.js';

/** The line to say, or undefined: webhooks are sent, or no webhook URL of the playbooks is set to one. */
export function heldWebhooksNotice(
  policy: WebhookPolicy,
  playbooks: Iterable<Playbook>,
  secrets: Record<string, string>,
  env: Record<string, string>,
): string | undefined {
  return heldWebhooks(policy, playbooks, secrets, env)?.line;
}

/**
 * The notice, with the names of the playbooks that would have sent webhooks; undefined when `heldWebhooksNotice`
 * is. `said` (the names of the playbooks the process has said it of) leaves those out, and is added to.
 */
export function heldWebhooks(
  policy: WebhookPolicy,
  playbooks: Iterable<Playbook>,
  secrets: Record<string, string>,
  env: Record<string, string>,
  said?: Set<string>,
): { line: string; playbooks: string[] } | undefined {
  if (!policy.heldBack) return undefined;
  const isUrl = (o: Record<string, string>, name: string) =>
    Object.hasOwn(o, name) && /^https?:\/\/./i.test((o[name] as string).trim());
  const named = new Set<string>();
  const sending = new Set<string>();
  for (const pb of playbooks) {
    if (said?.has(pb.name)) continue;
    for (const step of [...stepsIn(pb.steps), ...stepsIn(pb.finally)]) {
      if (!('uses' in step) || step.uses !== 'notify.webhook') continue;
      readsIn((step.with as Record<string, unknown> | undefined)?.url, (r) => {
        const set = [
          ...r.secrets.filter((s) => isUrl(secrets, s)).map((s) => `secrets.${s}`),
          ...r.env.filter((e) => isUrl(env, e.name)).map((e) => `env.${e.name}`),
        ];
        for (const name of set) named.add(name);
        if (set.length) sending.add(pb.name);
      });
    }
  }
  if (!named.size) return undefined;
  for (const name of sending) said?.add(name);
  const names = [...named].sort();
  const list =
    names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)} are` : `${names[0]} is`;
  return {
    line: `webhooks are held back on the embedded emulator: notify.webhook sends nothing (${list} set to ${names.length > 1 ? 'URLs' : 'a URL'}); ${EMULATOR_WEBHOOKS_SETTING}=send sends them`,
    playbooks: [...sending].sort(),
  };
}

/** The webhooks each policy (each process's) held back, by playbook. */
const heldCounts = new WeakMap<WebhookPolicy, Map<string, number>>();

/**
 * Logs a step that failed. A webhook held back is a warning for the first of each playbook, which says that
 * the next are not warned of each: they are logged at debug level, and their number at 10, 100, 1000, ... at
 * info. Every run still records its step failed, with why.
 */
export function logStepFailure(
  log: Logger,
  policy: WebhookPolicy | undefined,
  playbook: string,
  step: string,
  e: unknown,
  error: string,
): void {
  if (!policy?.heldBack || !(e instanceof RefusedError) || e.setting !== EMULATOR_WEBHOOKS_SETTING) {
    log.warn('step failed', { step, error });
    return;
  }
  let counts = heldCounts.get(policy);
  if (!counts) heldCounts.set(policy, (counts = new Map()));
  const n = (counts.get(playbook) ?? 0) + 1;
  counts.set(playbook, n);
  if (n === 1)
    return log.warn('step failed', {
      step,
      error,
      note: 'a webhook held back on the embedded emulator: the next ones of this playbook are not warned of each (logged at debug level, counted at 10, 100, 1000, ...); each run still records its step failed',
    });
  log.debug('step failed', { step, error });
  if (/^10+$/.test(String(n)))
    log.info(`webhooks held back on the embedded emulator: ${n} of this playbook so far`, { step, error });
}
