/**
 * Typed events: the JSON Schema and an example of the event of every callback service (schemas.ts,
 * examples.ts), and the check of an event against its service's schema.
 */
import { CALLBACK_SERVICES } from '../api/callback-services.js';
import { check, isValid } from '../api/validate.js';
import type { InputProblem } from '../errors.js';
import { closest } from '../util/closest.js';
import { EXAMPLES } from './examples.js';

export { EXAMPLES };
import * as schemas from './schemas.js';

/** Every callback service a listener can be registered for, and a playbook's `on.callback` can name. */
export const EVENT_SERVICES = CALLBACK_SERVICES;
export type EventService = (typeof CALLBACK_SERVICES)[number];

export const SCHEMAS: Record<EventService, object> = schemas;

export function isEventService(service: string): service is EventService {
  return (EVENT_SERVICES as readonly string[]).includes(service);
}

/** Why `service` is no callback service, with the nearest names (the case is a difference too). */
export function unknownService(service: string): string {
  const near = closest(service, EVENT_SERVICES);
  const hint = near.length ? `did you mean ${near.join(', ')}?` : `one of ${EVENT_SERVICES.join(', ')}`;
  return `unknown callback service ${service}: ${hint}`;
}

function known(service: string): EventService {
  if (isEventService(service)) return service;
  throw new Error(unknownService(service));
}

/** The JSON Schema (draft 2020-12) of `service`'s event, as a playbook reads it. */
export function eventSchema(service: string): object {
  return SCHEMAS[known(service)];
}

/** An example event of `service` (a fresh copy, free to change). */
export function eventExample(service: string): Record<string, unknown> {
  return structuredClone(EXAMPLES[known(service)]);
}

/** The name of the validator of `service`'s event that the build generates (api/generated.ts). */
export const eventValidatorName = (service: string) => `event:${service}`;

/** Problems of `event` against `service`'s schema; empty when it is valid. An unknown service is a problem. */
export function checkEvent(service: string, event: unknown): InputProblem[] {
  if (!isEventService(service)) return [{ path: '/', message: unknownService(service) }];
  return check(SCHEMAS[service], event, eventValidatorName(service));
}

/** Whether `event` is valid against `service`'s schema, without saying why not (checkEvent does). */
export function fitsEvent(service: EventService, event: unknown): boolean {
  return isValid(SCHEMAS[service], event, eventValidatorName(service));
}
