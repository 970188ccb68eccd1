/**
 * Conditions and `finally`, as a user found them (validate passed all four playbooks):
 * - `if: ${{ inputs.mode }}` with the string "false" ran its step: conditions took JavaScript's truthiness, and
 *   CEL has none. A condition that gives anything but true or false now fails its step, saying what it gave.
 * - An `if` that could not be evaluated (it read a skipped step's output) left its step `running` in the
 *   summary of an ended run, and the error did not name the step. It now fails the step, as the step's own
 *   error would (rescue, onError).
 * - In `finally`, a step that failed stopped the ones after it, and a guard on a step the run never reached
 *   (`steps.after.status == "succeeded"`, as the docs teach) failed with `No such key: after`. Each `finally`
 *   step now runs whatever the ones before it did, and a step never reached reads as skipped.
 */
import { expect } from 'chai';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { RunSummary } from '../../src/store/store.js';
import { clientFor, emulator, memoryStore, playbook } from './helpers.js';

describe('runner: conditions are true or false, and every finally step runs', function () {
  this.timeout(20_000);
  let emu: Emulator;
  let client: Client;

  before(async () => {
    emu = await emulator();
    client = clientFor(emu);
  });
  after(async () => {
    await client.close();
    await emu.close();
  });

  async function run(yaml: string, inputs: Record<string, unknown> = {}): Promise<RunSummary> {
    const store = memoryStore();
    try {
      return await runPlaybook(playbook(yaml), { client, store, inputs });
    } finally {
      await store.close();
    }
  }
  const statuses = (s: RunSummary) => Object.fromEntries(s.steps.map((x) => [x.id, x.status]));

  it('fails a step whose `if` gives a string, a number or null, saying what it gave', async () => {
    // The type is unknown to validate here (a var of the event's shape would be the same): the run decides.
    const yaml = (expr: string) => `version: 1
name: cond
on: { manual: true }
inputs:
  v: { type: object }
steps:
  - id: guarded
    if: \${{ ${expr} }}
    uses: log
    with: { message: ran }
`;
    for (const [v, given] of [
      ['false', 'the string "false"'],
      [0, 'the number 0'],
      [null, 'null'],
    ] as const) {
      const s = await run(yaml('inputs.v.x'), { v: { x: v } });
      expect(s.status, String(v)).to.equal('failed');
      expect(statuses(s)).to.deep.equal({ guarded: 'failed' });
      expect(s.error).to.equal(
        `step \`guarded\` failed: \`if\` gave ${given}, not true or false: compare it (== "yes", > 0, size(...) > 0) to make a condition`,
      );
    }
    const yes = await run(yaml('inputs.v.x'), { v: { x: true } });
    expect(statuses(yes)).to.deep.equal({ guarded: 'succeeded' });
    const no = await run(yaml('inputs.v.x'), { v: { x: false } });
    expect(statuses(no)).to.deep.equal({ guarded: 'skipped' });
  });

  it('fails a forEach whose items give a map or null, saying what they gave', async () => {
    const yaml = `version: 1
name: each
on: { manual: true }
inputs:
  v: { type: object }
steps:
  - id: each
    forEach:
      items: \${{ inputs.v.sites }}
      steps:
        - id: said
          uses: log
          with: { message: ran }
`;
    for (const [sites, given] of [
      [{ north: 1, south: 2 }, 'a map (of north, south)'],
      [null, 'null'],
    ] as const) {
      const s = await run(yaml, { v: { sites } });
      expect(s.status).to.equal('failed');
      expect(s.error).to.equal(
        `step \`each\` failed: forEach.items \${{ inputs.v.sites }} gave ${given}, not a list: a forEach iterates a list`,
      );
    }
  });

  it('fails, names and ends a step whose `if` cannot be evaluated; its onError applies', async () => {
    const s = await run(`version: 1
name: cond-error
on: { manual: true }
steps:
  - id: sk
    if: false
    uses: log
    with: { message: never }
  - id: b
    if: \${{ steps.sk.output.message > 0 }}
    uses: log
    with: { message: b }
`);
    expect(s.status).to.equal('failed');
    expect(statuses(s)).to.deep.equal({ sk: 'skipped', b: 'failed' });
    expect(s.error).to.match(
      /^step `b` failed: `if`: No such key: message \(step `sk` was skipped: its output is null\)/,
    );
    const continued = await run(`version: 1
name: cond-continue
on: { manual: true }
steps:
  - id: sk
    if: false
    uses: log
    with: { message: never }
  - id: b
    if: \${{ steps.sk.output.message > 0 }}
    onError: continue
    uses: log
    with: { message: b }
  - id: after
    uses: log
    with: { message: after }
`);
    expect(continued.status).to.equal('succeeded');
    expect(statuses(continued)).to.deep.equal({ sk: 'skipped', b: 'failed', after: 'succeeded' });
  });

  it('runs every finally step: after one fails, and with guards on steps the run never reached', async () => {
    const s = await run(`version: 1
name: finally-all
on: { manual: true }
steps:
  - id: boom
    fail: intentional
  - id: after
    uses: log
    with: { message: never reached }
finally:
  - id: fin1
    fail: finally fails too
  - id: fin2
    if: \${{ steps.after.status == "succeeded" }}
    uses: log
    with: { message: after succeeded }
  - id: fin3
    if: \${{ steps.after.status == "skipped" && steps.boom.status == "failed" }}
    uses: log
    with: { message: cleanup }
`);
    expect(s.status).to.equal('failed');
    // The run's error is the first: the main steps'.
    expect(s.error).to.equal('step `boom` failed: intentional');
    expect(statuses(s)).to.deep.equal({ boom: 'failed', fin1: 'failed', fin2: 'skipped', fin3: 'succeeded' });
  });
});
