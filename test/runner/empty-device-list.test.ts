/**
 * A step whose device list is empty sends nothing, and says so. Before, `devices.suspend` of a listing that found
 * no device, or a forEach over no item, ended `succeeded` with `calls 0`, and nothing in the summary, the
 * checkpoint or the log said that no request left (product.md 5a: `skipped` is "not sent"). A location report
 * of a list in memory failed the run instead (`deviceList must have at least 1 item`), and one of a listing's
 * stored items succeeded silently: the same empty list gave two different runs.
 *
 * An empty list is a normal outcome ("no device is over its usage tonight"): the run succeeds, and the step is
 * `skipped` with its reason, as a step whose `if` was false is, in the summary, its checkpoint and its log line.
 */
import { expect } from 'chai';
import { runPlaybook } from '../../src/runner/runner.js';
import type { Checkpoint } from '../../src/runner/types.js';
import type { RunSummary, StepSummary } from '../../src/store/store.js';
import { systemClock } from '../../src/clock.js';
import { calls, captureLogger, interruptedRun, onEmulator, playbook, type LogLine } from './helpers.js';

/** A listing that finds no device: no ICCID of the emulator's starts with zeros. */
const NOTHING = `
  - id: over
    uses: devices.list
    with:
      accountName: "\${{ inputs.account }}"
      filter: { deviceIdentifierFilters: [{ kind: ICCID, startswith: "000000" }] }`;

const head = (name: string) => `version: 1
name: ${name}
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:`;

const NO_DEVICES = (member: string) => `no devices: \`${member}\` is an empty list, nothing was sent`;

describe('runner: a step given no devices is skipped, and says why', function () {
  this.timeout(30_000);
  const t = onEmulator();

  async function run(
    yaml: string,
    o: { dryRun?: boolean } = {},
  ): Promise<{ s: RunSummary; lines: LogLine[]; steps: Map<string, Checkpoint> }> {
    const logger = captureLogger();
    const s = await runPlaybook(playbook(yaml), {
      client: t.client,
      store: t.store,
      logger,
      inputs: { account: t.account },
      ...o,
    });
    const steps = (await t.store.loadSteps(s.runId)) as Map<string, Checkpoint>;
    return { s, lines: logger.lines, steps };
  }
  const step = (s: RunSummary, id: string) => s.steps.find((x) => x.id === id) as StepSummary;
  const ended = (lines: LogLine[], id: string) =>
    lines.find((l) => l.message === 'step ended' && l.meta.step === id);

  it('a device action of an empty listing: skipped with its reason, nothing sent, the run succeeds', async () => {
    const before = (await calls(t.emu)).actions['devices.suspend'] ?? 0;
    const { s, lines, steps } = await run(`${head('suspend-none')}${NOTHING}
  - id: suspend
    uses: devices.suspend
    with: { accountName: "\${{ inputs.account }}", devices: "\${{ steps.over.items }}" }
  - id: after
    uses: log
    with:
      message: "suspend was \${{ steps.suspend.status }}: \${{ steps.suspend.reason }}"
`);
    expect(s.status).to.equal('succeeded');
    const suspend = step(s, 'suspend');
    expect(suspend).to.deep.include({ status: 'skipped', reason: NO_DEVICES('devices'), calls: 0 });
    expect(suspend.devices.total).to.equal(0);
    expect((await calls(t.emu)).actions['devices.suspend'] ?? 0).to.equal(before);
    // The run as stored (runs show, the console) says so too.
    const stored = await t.store.getRun(s.runId);
    expect(stored?.summary?.steps.find((x) => x.id === 'suspend')).to.deep.include({
      status: 'skipped',
      reason: NO_DEVICES('devices'),
    });
    // Its checkpoint: a resumed run restores it as it was.
    expect(steps.get('suspend')).to.deep.include({ status: 'skipped', reason: NO_DEVICES('devices') });
    expect(ended(lines, 'suspend')?.meta).to.deep.include({
      status: 'skipped',
      reason: NO_DEVICES('devices'),
    });
    // Expressions read it, as they read any step's status.
    expect(lines.find((l) => l.message.startsWith('suspend was'))?.message).to.equal(
      `suspend was skipped: ${NO_DEVICES('devices')}`,
    );
  });

  it('a forEach over no item is skipped, and says that no iteration ran', async () => {
    const { s, lines, steps } = await run(`${head('each-none')}${NOTHING}
  - id: each
    forEach:
      items: "\${{ steps.over.items }}"
      steps:
        - id: restore
          uses: devices.restore
          with: { accountName: "\${{ inputs.account }}", devices: "\${{ [item] }}" }
  - id: after
    uses: log
    with: { message: "\${{ steps.each.output.iterations }} iterations" }
`);
    expect(s.status).to.equal('succeeded');
    const why = 'no items: `forEach.items` is an empty list, no iteration ran';
    expect(step(s, 'each')).to.deep.include({ status: 'skipped', reason: why });
    expect(steps.get('each')).to.deep.include({ status: 'skipped', reason: why });
    expect(ended(lines, 'each')?.meta).to.deep.include({ status: 'skipped', reason: why });
    // Its output is there still: a later step reads how many iterations ran.
    expect(step(s, 'after').status).to.equal('succeeded');
  });

  it('location steps of no device are skipped alike, whether their list is stored or in memory', async () => {
    const before = await calls(t.emu);
    const { s } = await run(`${head('locate-none')}${NOTHING}
  - id: streamed
    uses: location.createReport
    with: { accountName: "\${{ inputs.account }}", deviceList: "\${{ steps.over.items }}", cacheMode: "0" }
    wait: { for: completion }
  - id: failed
    uses: ledger.query
    with: { step: nothing, outcome: failed }
  - id: report
    uses: location.createReport
    with: { accountName: "\${{ inputs.account }}", deviceList: "\${{ steps.failed.items }}", cacheMode: "0" }
  - id: locate
    uses: location.locate
    with: { accountName: "\${{ inputs.account }}", deviceList: "\${{ steps.failed.items }}" }
  - id: sms
    uses: sms.send
    with:
      accountName: "\${{ inputs.account }}"
      deviceIds: "\${{ steps.failed.items }}"
      smsMessage: hello
`);
    expect(s.status, s.error).to.equal('succeeded');
    for (const id of ['streamed', 'report', 'locate'])
      expect(step(s, id), id).to.deep.include({
        status: 'skipped',
        reason: NO_DEVICES('deviceList'),
        calls: 0,
      });
    expect(step(s, 'sms')).to.deep.include({ status: 'skipped', reason: NO_DEVICES('deviceIds'), calls: 0 });
    const after = await calls(t.emu);
    for (const action of ['location.createReport', 'location.locate', 'sms.send'])
      expect(after.actions[action] ?? 0, action).to.equal(before.actions[action] ?? 0);
  });

  it('a resumed run restores the skipped step with its reason, and sends nothing for it', async () => {
    const pb = playbook(`${head('resumed-none')}${NOTHING}
  - id: suspend
    uses: devices.suspend
    with: { accountName: "\${{ inputs.account }}", devices: "\${{ steps.over.items }}" }
  - id: pause
    wait: 30s
`);
    const o = { client: t.client, store: t.store, inputs: { account: t.account } };
    await t.store.createRun({
      id: 'resumed',
      playbook: pb.name,
      status: 'running',
      trigger: { type: 'manual' },
      inputs: o.inputs,
      startedAt: new Date().toISOString(),
    });
    await interruptedRun(pb, { ...o, runId: 'resumed' }, async () =>
      (await t.store.loadSteps('resumed')).has('suspend'),
    );
    const before = await calls(t.emu);
    const s = await runPlaybook(pb, {
      ...o,
      runId: 'resumed',
      // The wait is over by the time the run is resumed.
      clock: { ...systemClock, now: () => Date.now() + 60_000 },
    });
    expect(s.status, s.error).to.equal('succeeded');
    expect(step(s, 'suspend')).to.deep.include({ status: 'skipped', reason: NO_DEVICES('devices') });
    // Nor listed again: the resumed run took both steps from their checkpoints.
    const after = await calls(t.emu);
    for (const action of ['devices.list', 'devices.suspend'])
      expect(after.actions[action] ?? 0, action).to.equal(before.actions[action] ?? 0);
  });

  it('a dry run says the same, rather than plan a call for no device', async () => {
    const { s } = await run(
      `${head('dry-none')}${NOTHING}
  - id: suspend
    uses: devices.suspend
    with: { accountName: "\${{ inputs.account }}", devices: "\${{ steps.over.items }}" }
`,
      { dryRun: true },
    );
    expect(step(s, 'suspend')).to.deep.include({ status: 'skipped', reason: NO_DEVICES('devices') });
    expect(s.planned ?? []).to.deep.equal([]);
  });

  it('a step whose `if` is false gives its reason by the same means', async () => {
    const { s } = await run(`${head('if-false')}
  - id: guarded
    if: "\${{ inputs.account == "none" }}"
    uses: log
    with: { message: ran }
`);
    expect(step(s, 'guarded')).to.deep.include({ status: 'skipped', reason: '`if` was false' });
  });

  it('an empty list that means something is still sent: replacing the exclusions with none clears them', async () => {
    const before = (await calls(t.emu)).actions['location.setExclusions'] ?? 0;
    const { s } = await run(`${head('exclusions-none')}
  - id: clear
    uses: location.setExclusions
    with: { accountName: "\${{ inputs.account }}", exclusion: [], type: replace }
`);
    expect(s.status, s.error).to.equal('succeeded');
    expect(step(s, 'clear')).to.deep.include({ status: 'succeeded', calls: 1 });
    expect((await calls(t.emu)).actions['location.setExclusions'] ?? 0).to.equal(before + 1);
  });
});
