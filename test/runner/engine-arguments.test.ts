/**
 * The arguments of an engine action (`log`, `notify.webhook`, `report.write`, `ledger.query`) are checked
 * against its schema once rendered, as an API action's input is before it is sent: an expression validate
 * cannot type (an element of a list of mixed values, a member of a map written in the expression) fails the
 * step with FB_INPUT naming the argument, before any attempt, before the action does anything; never a TypeError.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { engineSettings } from '../../src/actions/settings.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import { onEmulator, runLogged, stepOf } from './helpers.js';
import { hookAndDir } from './outside.js';

describe('runner: engine action arguments are checked as they run', function () {
  this.timeout(30_000);
  const t = onEmulator();
  const out = hookAndDir();

  /** Runs one step `bad` of `uses` with `args`; it must fail with FB_INPUT, at once, matching `problem`. */
  async function refused(uses: string, args: string, problem: RegExp) {
    const yaml = `
version: 1
name: engine-args
on: { manual: true }
steps:
  - id: bad
    uses: ${uses}
    with: ${args}
`;
    const { s, lines } = await runLogged(t, yaml, {
      engine: engineSettings({ reportsDir: out.dir, webhookAllow: ['127.0.0.1'] }),
    });
    const what = `${uses} ${args}`;
    expect(s.status, what).to.equal('failed');
    expect(s.error, what).to.match(
      new RegExp(`^step \`bad\` failed: ${uses.replace('.', '\\.')}: invalid input`),
    );
    expect(s.error, what).to.match(problem);
    expect(s.error, what).not.to.match(/TypeError|is not a function|undefined/);
    const step = stepOf(s, 'bad');
    expect(step.status, what).to.equal('failed');
    // An input that is wrong stays wrong: checked before the first attempt, it makes none.
    expect(step.attempts, what).to.equal(0);
    return { s, lines };
  }

  it('a log level rendered to no log level fails the step, naming it, and logs nothing', async () => {
    const levels = /\/level: level must be one of "debug", "info", "warn", "error"/;
    for (const level of [`"\${{ ['warn', 1][1] }}"`, `"\${{ ['loud', 'info'][0] }}"`]) {
      const { lines } = await refused('log', `{ message: never logged, level: ${level} }`, levels);
      expect(lines.map((l) => l.message)).not.to.include('never logged');
    }
    await refused(
      'log',
      `{ message: hi, fields: "\${{ [{'a': 1}, 2][1] }}" }`,
      /\/fields: fields must be an object, got a number/,
    );
  });

  it('a whole computed `with` is checked too: an unknown argument is named, with the one meant', async () => {
    await refused(
      'log',
      `"\${{ {'message': 'hi', 'levl': 'warn'} }}"`,
      /\/levl: unknown field `levl` \(did you mean `level`\?\)/,
    );
    await refused('log', `"\${{ [{'message': 'hi'}, 1][1] }}"`, /\/: input must be an object, got a number/);
  });

  it('a webhook with a method, url or header rendered wrong is refused before anything is sent', async () => {
    const url = `http://127.0.0.1:${out.hook.port}/hook`;
    await refused(
      'notify.webhook',
      `{ url: "${url}", method: "\${{ ['GET', 'POST'][0] }}" }`,
      /\/method: method must be one of "POST", "PUT"/,
    );
    await refused(
      'notify.webhook',
      `{ url: "${url}", headers: "\${{ {'X-Count': [1, 'a'][0]} }}" }`,
      /\/headers\/X-Count: X-Count must be a string, got a number/,
    );
    await refused(
      'notify.webhook',
      `{ url: "\${{ [1, 'a'][0] }}" }`,
      /\/url: url must be a string, got a number/,
    );
    expect(out.hook.bodies.length, 'requests the hook received').to.equal(0);
  });

  it('a ledger query with an outcome or a count of runs rendered wrong fails instead of reading nothing', async () => {
    await refused(
      'ledger.query',
      `{ outcome: "\${{ ['lost', 1][0] }}" }`,
      /\/outcome: outcome must be one of "accepted", "succeeded", "failed", "skipped", "unconfirmed"/,
    );
    await refused('ledger.query', `{ runs: "\${{ [0, 'a'][0] }}" }`, /\/runs: runs must be >= 1/);
    await refused(
      'ledger.query',
      `{ error: "\${{ [[1], 'a'][0] }}" }`,
      /\/error\/0: item 0 of error must be a string, got a number/,
    );
  });

  it('report.write with a path rendered to no text writes nothing', async () => {
    await refused(
      'report.write',
      `{ path: "\${{ [7, 'a'][0] }}", rows: [] }`,
      /\/path: path must be a string, got a number/,
    );
    expect(existsSync(join(out.dir, '7'))).to.equal(false);
  });

  it('validate refuses a `rows` that is a list of numbers, naming what it takes', () => {
    const loaded = loadPlaybook(
      `version: 1
name: rows-of-numbers
on: { manual: true }
steps:
  - id: out
    uses: report.write
    with: { path: n.csv, rows: "\${{ [1, 2] }}" }
`,
      'rows.yaml',
    );
    const errors = loaded.diagnostics
      .filter((d) => d.severity === 'error')
      .map((d) => `${d.line}:${d.column} [${d.rule}] ${d.message}`);
    expect(errors).to.deep.equal([
      '7:33 [type] `rows` of report.write takes a list of maps; this expression gives a list of ints',
    ]);
  });
});
