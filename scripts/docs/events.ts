/** docs/events.md: the event of every callback service, from src/events (its schema and example). */
import { EVENT_SERVICES, eventExample, eventSchema } from '../../src/events/index.js';
import { membersTable } from '../../src/cli/schema-markdown.js';

export function eventsReference(): string {
  const lines = [
    '# Events',
    '',
    '<!-- Written by `npm run schemas` from src/events/: do not edit. -->',
    '',
    'A playbook with `on.callback` runs when the service posts a callback of its service; `event` is the message,',
    'without the listener credentials and delivery counters of its envelope (`username`, `password`,',
    '`callbackCount`, `maxCallbackThreshold`). `fleetbook validate` checks every expression that reads `event`',
    "against the schema of the playbook's service(s) below. Each schema, with its example, is also in",
    '`schemas/events/`. Guard a member that only some messages carry with `has(...)`.',
    '',
    ...EVENT_SERVICES.map((s) => `- [${s}](#${s.toLowerCase()})`),
  ];
  for (const service of EVENT_SERVICES) {
    const schema = eventSchema(service) as Record<string, unknown>;
    lines.push(
      '',
      `## ${service}`,
      '',
      ...(typeof schema.description === 'string' ? [schema.description, ''] : []),
      `[schema](../schemas/events/${service}.schema.json)`,
      '',
      ...membersTable(schema, false, 8),
      '',
      'Example:',
      '',
      '```json',
      JSON.stringify(eventExample(service), null, 2),
      '```',
    );
  }
  return `${lines.join('\n')}\n`;
}
