/**
 * A listing filtered on an identifier kind (`deviceIdentifierFilters`) hands on each device by its identifier
 * of that kind: the one the filter matched, not whichever the record lists first.
 */
import { expect } from 'chai';
import { runPlaybook } from '../../src/runner/runner.js';
import { captureLogger, onEmulator, playbook } from './helpers.js';

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
