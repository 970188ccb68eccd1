/**
 * docs/cli.md against the built CLI's own help: every command has its section, linked from the index at the top
 * of the page, with its usage, each flag its `--help` lists, and its exit status.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';

const DOC = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'cli.md'), 'utf8');

/** The names listed under `Commands:` in a help text, without `help`. */
function commandsOf(help: string): string[] {
  const list = help.split('\nCommands:\n')[1] ?? '';
  return [...list.matchAll(/^ {2}([a-z]+)/gm)].map((m) => m[1] as string).filter((c) => c !== 'help');
}

/** The long flags listed under `Options:` in a help text, without `--help`. */
function flagsOf(help: string): string[] {
  const list = (help.split('\nOptions:\n')[1] ?? '').split('\nCommands:\n')[0] as string;
  return [...list.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)]
    .map((m) => m[1] as string)
    .filter((f) => f !== '--help');
}

/** The text of the section `## fleetbook COMMAND`, up to the next `## `. */
function section(command: string): string {
  const start = DOC.indexOf(`\n## fleetbook ${command}\n`);
  expect(start, `docs/cli.md has a section "## fleetbook ${command}"`).to.be.greaterThan(-1);
  const end = DOC.indexOf('\n## ', start + 1);
  return DOC.slice(start, end === -1 ? undefined : end);
}

describe('docs/cli.md: every command as its help gives it', function () {
  this.timeout(60_000);
  let commands: { name: string; help: string }[];

  before(async () => {
    const help = async (args: string[]) => {
      const r = await fleetbook([...args, '--help'], {});
      expect(r.code, r.stderr).to.equal(0);
      return r.stdout;
    };
    commands = [];
    for (const top of commandsOf(await help([]))) {
      const text = await help([top]);
      const subs = commandsOf(text);
      if (!subs.length) commands.push({ name: top, help: text });
      for (const sub of subs) commands.push({ name: `${top} ${sub}`, help: await help([top, sub]) });
    }
    expect(commands.map((c) => c.name)).to.include.members(['validate', 'runs show', 'store compact']);
  });

  it('has a section for each command, linked from the index', () => {
    for (const { name } of commands) {
      section(name);
      expect(DOC, name).to.include(`(#fleetbook-${name.replace(' ', '-')})`);
    }
  });

  it("gives each command's usage, every flag its help lists, and its exit status", () => {
    for (const { name, help } of commands) {
      const text = section(name);
      expect(text, name).to.include(`\`\`\`\nfleetbook ${name}`);
      for (const flag of flagsOf(help)) expect(text, `${name} ${flag}`).to.include(flag);
      expect(text, name).to.match(/^(### )?Exit status/m);
    }
  });
});
