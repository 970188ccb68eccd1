/** `fleetbook actions [ACTION]`: every action with its method and path, or one action's reference. */
import { closest } from '../util/closest.js';
import { EXIT_USAGE } from './exit-codes.js';

export async function actionsCommand(action: string | undefined, flags: { json?: boolean }): Promise<number> {
  if (action === undefined) return (await import('./call.js')).listActions(flags);
  // Refused rather than ignored: a script that asked for JSON would otherwise be handed Markdown.
  if (flags.json) {
    process.stderr.write(
      `fleetbook: --json lists every action (\`fleetbook actions --json\`); the reference of ${action} is Markdown only\n`,
    );
    return EXIT_USAGE;
  }
  const { ALL_ACTIONS, actionReference } = await import('./actions-reference.js');
  if (!ALL_ACTIONS.includes(action)) {
    const near = closest(action, ALL_ACTIONS);
    const hint = near.length ? ` (did you mean ${near.join(' or ')}?)` : ' (`fleetbook actions` lists them)';
    process.stderr.write(`fleetbook: unknown action ${action}${hint}\n`);
    return EXIT_USAGE;
  }
  process.stdout.write(actionReference(action));
  return 0;
}
