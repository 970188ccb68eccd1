/**
 * What a playbook's expressions read is taken from their syntax trees (src/expressions/reads.ts): the step outputs a
 * run keeps, and the secrets that must be set before it starts. Read from the text, a step chosen at run time
 * (`steps[inputs.which]`) kept nothing and the run failed with "No such key", and `secrets.X` inside a string
 * literal was taken for a secret the playbook needs.
 */
import { expect } from 'chai';
import { planOf } from '../../src/runner/plan.js';
import { runPlaybook } from '../../src/runner/runner.js';
import { accountDevices, captureLogger, onEmulator, playbook, type LogLine } from './helpers.js';

/** A playbook of a listing `devices` and a log step whose message is `message`. */
const withMessage = (message: string, top = '') =>
  playbook(`
version: 1
name: reads
on: { manual: true }
${top}
steps:
  - id: devices
    uses: devices.list
    with: { accountName: '0000123456-00001', currentState: active }
  - id: other
    uses: log
    with: { message: other }
  - id: show
    uses: log
    with: { message: ${JSON.stringify(message)} }
`);

const referenced = (message: string) =>
  Object.fromEntries([...planOf(withMessage(message)).referenced].map(([id, m]) => [id, [...m].sort()]));
const secrets = (message: string) => [...planOf(withMessage(message)).secrets].sort();

describe('runner: what expressions read', () => {
  it('names the members of each step read, by dot or by a literal index', () => {
    expect(referenced('${{ size(steps.devices.output.devices) }}')).to.deep.equal({ devices: ['output'] });
    expect(referenced('${{ steps["devices"].items }}')).to.deep.equal({ devices: ['items'] });
    expect(
      referenced('${{ steps.devices.output.count }} ${{ steps.devices.output["leftOut"] }}'),
    ).to.deep.equal({ devices: ['counts'] });
    expect(referenced('${{ steps.devices.status }}')).to.deep.equal({ devices: ['other'] });
    expect(referenced('${{ string(steps.devices) }}')).to.deep.equal({ devices: ['*'] });
  });

  it('counts a step chosen at run time as every step read whole', () => {
    expect(referenced('${{ size(steps[string(1)].output.devices) }}')).to.deep.equal({
      devices: ['*'],
      other: ['*'],
      show: ['*'],
    });
  });

  it('reads nothing in string literals, nor under a comprehension variable of the same name', () => {
    expect(referenced('${{ "see steps.devices.output" }}')).to.deep.equal({});
    expect(secrets('${{ "set secrets.TOKEN first" }} and secrets.PLAIN outside')).to.deep.equal([]);
    expect(referenced('${{ [1].map(steps, steps) }}')).to.deep.equal({});
  });

  it('needs the secrets read by name, and not those whose presence is tested', () => {
    expect(secrets('${{ secrets.A }} ${{ secrets["B"] }}')).to.deep.equal(['A', 'B']);
    expect(secrets('${{ has(secrets.A) ? secrets.A : "" }}')).to.deep.equal([]);
    expect(secrets('${{ "A" in secrets ? secrets.A : "" }} ${{ "B" in secrets }}')).to.deep.equal([]);
    // A secret chosen at run time is not known before the run.
    expect(secrets('${{ secrets[string(1)] }}')).to.deep.equal([]);
  });

  describe('on the emulator', function () {
    this.timeout(20_000);
    const t = onEmulator({ devicesPerAccount: 20 });

    it('a run reads the output of a step chosen by an input', async () => {
      const lines: LogLine[] = [];
      const pb = withMessage(
        '${{ "listed " + string(size(steps[inputs.which].output.devices)) }}',
        'inputs: { which: { type: string, default: devices } }',
      );
      const s = await runPlaybook(pb, { client: t.client, store: t.store, logger: captureLogger(lines) });
      expect([s.status, s.error]).to.deep.equal(['succeeded', undefined]);
      const active = (await accountDevices(t.emu, '0000123456-00001')).filter(
        (d) => d.state === 'active',
      ).length;
      expect(active).to.be.greaterThan(0);
      expect(lines.map((l) => l.message).filter((m) => m.startsWith('listed'))).to.deep.equal([
        `listed ${active}`,
      ]);
    });

    it('a run without a secret it reads fails before its first step, naming the secret', async () => {
      const lines: LogLine[] = [];
      const pb = withMessage('${{ "key " + secrets.SHOW_KEY }}');
      const opts = { client: t.client, store: t.store, logger: captureLogger(lines) };
      const s = await runPlaybook(pb, opts);
      expect(s.status).to.equal('failed');
      expect(s.error).to.equal(
        'playbook reads reads secrets.SHOW_KEY, not set: set FLEETBOOK_SECRET_SHOW_KEY',
      );
      expect(s.steps).to.deep.equal([]);
      expect(lines.map((l) => l.message)).not.to.include('other');
      const ok = await runPlaybook(pb, { ...opts, secrets: { SHOW_KEY: 'k' } });
      expect([ok.status, ok.error]).to.deep.equal(['succeeded', undefined]);
    });
  });
});
