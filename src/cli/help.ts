/**
 * `fleetbook help A B`: the help of B, a subcommand of A. Commander's own help command reads one name and drops
 * the rest, so `help runs show` printed the help of `runs`; this one follows every name it is given.
 */
import type { Command } from 'commander';
import { closest } from '../util/closest.js';

/** Gives `group`, and each group below it, a `help [command...]` in place of commander's own. */
export function addHelpCommands(group: Command): void {
  if (group.commands.length === 0) return;
  for (const sub of group.commands) addHelpCommands(sub);
  group
    .command('help')
    .description('display help for command')
    .argument('[command...]', 'a command, and a subcommand of it')
    .action((names: string[]) => {
      let command = group;
      for (const name of names) {
        const sub = command.commands.find((c) => c.name() === name || c.aliases().includes(name));
        if (!sub) refuse(command, name);
        command = sub;
      }
      command.help();
    });
}

/** Refuses `name`, which names no subcommand of `command`: with the closest names, as commander says them. */
function refuse(command: Command, name: string): never {
  const names = command.commands.map((c) => c.name());
  if (names.length === 0)
    command.error(`error: unknown command '${name}': '${path(command)}' has no commands`, {
      code: 'commander.unknownCommand',
    });
  const near = closest(name, names);
  const hint =
    near.length > 1
      ? `\n(Did you mean one of ${near.join(', ')}?)`
      : near.length === 1
        ? `\n(Did you mean ${near[0]}?)`
        : '';
  command.error(`error: unknown command '${name}'${hint}`, { code: 'commander.unknownCommand' });
}

/** `runs show` for the command of `fleetbook runs show`. */
function path(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}
