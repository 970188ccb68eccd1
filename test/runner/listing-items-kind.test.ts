/**
 * A listing filtered on an identifier kind (`deviceIdentifierFilters`) hands on each device by its identifier
 * of that kind: the one the filter matched, not whichever the record lists first.
 */
import { expect } from 'chai';
import { runPlaybook } from '../../src/runner/runner.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { accountDevices, captureLogger, onEmulator, playbook } from './helpers.js';
import { behindRewritingProxy } from './proxied.js';

type Json = Record<string, unknown>;

describe('runner: a listing filtered on an identifier kind', function () {
  this.timeout(30_000);
  const t = onEmulator({ devicesPerAccount: 40 });

  it('gives each device as its identifier of that kind', async () => {
    const pb = playbook(`
version: 1
name: by-iccid
on: { manual: true }
inputs:
  account: { type: string }
steps:
  - id: devices
    uses: devices.list
    with:
      accountName: "\${{ inputs.account }}"
      filter: { deviceIdentifierFilters: [{ kind: ICCID, startswith: "89" }] }
  - id: keep
    set: { first: "\${{ steps.devices.items[0] }}" }
  - id: all
    uses: log
    with: { message: items, fields: { items: "\${{ steps.devices.items }}" } }
`);
    const logger = captureLogger();
    const summary = await runPlaybook(pb, {
      client: t.client,
      store: t.store,
      logger,
      inputs: { account: t.account },
    });
    expect(summary.status, summary.error).to.equal('succeeded');
    const listed = await t.client.devices.list({
      accountName: t.account,
      filter: { deviceIdentifierFilters: [{ kind: 'iccid', startswith: '89' }] },
    });
    expect(listed.devices.length).to.be.greaterThan(0);
    // The items as the store keeps them (the checkpoint only counts them): runs of one kind.
    const step = (await t.store.loadSteps(summary.runId)).get('devices') as { storedItems: number };
    const ids = listed.devices.map((d) => d.deviceIds.find((i) => i.kind === 'iccid')!.id);
    expect(step.storedItems).to.equal(ids.length);
    // Read back from the store by an expression (the store drops them once the run ends).
    const logged = logger.lines.find((l) => l.message === 'items');
    expect(logged?.meta.items).to.deep.equal(ids.map((id) => ({ id, kind: 'iccid' })));
  });
});

describe('runner: a listing whose identifiers come with their kinds in any case', function () {
  this.timeout(30_000);
  const w = behindRewritingProxy(() => new SqliteStore(':memory:'));

  it('gives each device as its first identifier, its kind in lower case, runs of kinds in any order', async () => {
    // The first identifier's kind changes case from device to device, and every third device lists its ICCID first.
    const CASES = ['IMEI', 'imei', 'Imei', 'IMEI'];
    w.rewrite = (_method, path, body) => {
      if (!path.endsWith('/devices/actions/list')) return undefined;
      const page = body as { devices: { deviceIds: Json[] }[] };
      return {
        ...page,
        devices: page.devices.map((d, i) => {
          const [first, ...rest] = d.deviceIds.map((x) =>
            x.kind === 'imei' ? { ...x, kind: CASES[i % CASES.length] } : { ...x, kind: 'ICCID' },
          );
          return { ...d, deviceIds: i % 3 === 2 ? [...rest, first] : [first, ...rest] };
        }),
      };
    };
    const logger = captureLogger();
    const s = await w.run(
      `
version: 1
name: any-case
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: devices
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}" }
  - id: all
    uses: log
    with: { message: items, fields: { items: "\${{ steps.devices.items }}" } }
`,
      { inputs: { account: w.account }, logger },
    );
    expect(s.status, s.error).to.equal('succeeded');
    const listed = await accountDevices(w.emu, w.account);
    const expected = listed.map((d, i) => {
      const by = (kind: string) => d.deviceIds.find((x) => x.kind === kind)!.id;
      return i % 3 === 2 ? { id: by('iccid'), kind: 'iccid' } : { id: by('imei'), kind: 'imei' };
    });
    expect(expected.length).to.equal(20);
    expect(logger.lines.find((l) => l.message === 'items')?.meta.items).to.deep.equal(expected);
  });
});
