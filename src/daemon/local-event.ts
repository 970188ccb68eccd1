/**
 * A run started by hand (`fleetbook run`, `fleetbook test`), by a callback event or by inputs, as the daemon
 * would start it: a callback's run gets the same trigger and the same event (checked against its service's
 * schema first), a manual run needs `on.manual`. Or why there is no run.
 */
import { isoTime } from '../clock.js';
import type * as Events from '../events/index.js';
import type { Playbook } from '../playbook/schema.js';
import { coerceInputs, type InputWording } from '../runner/inputs.js';
import { onFirstUse } from '../util/on-first-use.js';
import { callbackMessage, kindOf, serviceOf, type Json } from './callbacks.js';
import { callbackRun, callbacksOf, selects } from './matcher.js';

/** The event schemas, loaded by the first event: a manual run never builds them. */
const events = onFirstUse<typeof Events>(import.meta.url, '../events/index.js');

export type LocalRun = { trigger: Json; event?: Json; inputs: Json } | { refused: string };

/**
 * The run `pb` gets for a callback event (as the service posts it), or for inputs (strings are coerced, as
 * `--input` gives them), or why it gets none. A callback's run has no inputs of its own, as in the daemon.
 * `word` says an input given a value its type does not take, and how to give a missing one, as the caller's user
 * gives inputs.
 */
export function localRun(
  pb: Playbook,
  start: { event: unknown } | { inputs: Json },
  word?: InputWording,
): LocalRun {
  if ('event' in start) return eventRun(pb, start.event);
  if (!pb.on.manual) {
    const callbacks = callbacksOf(pb).map((c) => c.service);
    return {
      refused: callbacks.length
        ? `playbook ${pb.name} runs on a callback (${callbacks.join(', ')}): give it an event (\`--event FILE\`, or \`event:\` in a test), or add \`manual: true\` under \`on:\` to run it without one`
        : `playbook ${pb.name} does not declare on.manual: add \`manual: true\` under \`on:\` to run it by hand`,
    };
  }
  try {
    return { trigger: { type: 'manual', by: 'cli' }, inputs: coerceInputs(pb, start.inputs, word) };
  } catch (e) {
    return { refused: (e as Error).message };
  }
}

function eventRun(pb: Playbook, body: unknown): LocalRun {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return { refused: 'the event is not a JSON object' };
  const services = [...new Set(callbacksOf(pb).map((c) => c.service))];
  if (!services.length)
    return { refused: `playbook ${pb.name} has no on.callback: no event starts it (give it inputs instead)` };
  // One service: the route the daemon registers for it. Several: the one the message reports, as on the
  // listener's catch-all route.
  const kind = kindOf(body as Json);
  const named = services.length === 1 ? services[0] : services.find((s) => kind && serviceOf(kind) === s);
  const message = callbackMessage(body as Json, named, isoTime(Date.now()));
  if (typeof message === 'string') return { refused: `the daemon refuses this event: ${message}` };
  // The payload as the inbox gives it back: stored as JSON.
  const { trigger, event } = callbackRun({
    ...message,
    payload: JSON.parse(JSON.stringify(message.payload)),
  });
  const problems = events().checkEvent(message.service, event);
  if (problems.length)
    return {
      refused: `the event is not a ${message.service} event:\n${problems.map((p) => `  event${p.path === '/' ? '' : p.path}: ${p.message}`).join('\n')}`,
    };
  let failure = '';
  const selected = selects(pb, message.service, event, (filter, e) => {
    failure = `on.callback.if ${filter} failed on the event: ${e.message}`;
  });
  if (!selected)
    return {
      refused: `${failure || `on.callback (${services.join(', ')}) does not select this ${message.service} event`}: the daemon would start no run of ${pb.name} for it`,
    };
  return { trigger, event, inputs: {} };
}
