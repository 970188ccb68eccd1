/**
 * `fleetbook call` of each operation that issue 17 added, as a user types it with nothing configured: the built
 * binary starts its embedded emulator (seed 1, the accounts of the docs) and the call succeeds. Each call is a
 * process of its own, so each input stands alone on the default world. `npm test` builds dist/ first.
 */
import { expect } from 'chai';
import { World } from '../../src/emulator/seed.js';
import { DEFAULT_START } from '../../src/emulator/sim-clock.js';
import { fleetbook } from '../helpers/cli.js';

const PRIMARY = '0000123456-00001';
const MANAGED = '0000123456-00002';
const SKU = 'TS-LOC-COARSE-CellID-Aggr';

describe('fleetbook call: the operations of issue 17 on the embedded emulator', function () {
  this.timeout(120_000);

  const call = async (action: string, body: unknown) => {
    const r = await fleetbook(['call', action, '--body', JSON.stringify(body)], {});
    expect(r.code, `${action}: ${r.stderr}`).to.equal(0);
    return JSON.parse(r.stdout) as Record<string, unknown>;
  };

  const NEW = [
    'managedAccounts.provision',
    'managedAccounts.cancel',
    'managedAccounts.list',
    'accounts.get',
    'accounts.statesAndServices',
    'plans.list',
    'sms.history',
    'sms.startCallbacks',
    'location.subscription',
    'location.usage',
    'groups.create',
    'groups.list',
    'groups.get',
    'groups.update',
    'groups.delete',
    'devices.connectionHistory',
    'devices.provisioningHistory',
    'devices.suspensionStatus',
    'usage.aggregate',
    'usage.aggregateAsync',
  ];

  it('fleetbook actions lists each one with its method and path', async () => {
    const r = await fleetbook(['actions'], {});
    expect(r.code, r.stderr).to.equal(0);
    const lines = new Map(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => [l.split(/\s+/)[0], l] as const),
    );
    for (const action of NEW)
      expect(lines.get(action), action).to.match(/ (GET|POST|PUT|DELETE) +\/[a-z0-9-]+\/v1\//);
    expect(lines.get('groups.get')).to.match(/GET +\/m2m\/v1\/groups\/\{accountName\}\/name\/\{groupName\}$/);
  });

  it('calls each one and gets its answer', async () => {
    const listed = (await call('devices.list', { accountName: PRIMARY })) as {
      devices: { deviceIds: { id: string; kind: string }[]; carrierInformations: { state: string }[] }[];
    };
    const active = listed.devices.find((d) => d.carrierInformations[0]!.state === 'active')!;
    const imei = active.deviceIds.find((x) => x.kind === 'imei')!;
    // The seeded managed account was added and provisioned before the world began, with seeded txids.
    const world = new World({ seed: 1, accounts: 3, devicesPerAccount: 50, start: DEFAULT_START });
    const managed = { accountName: MANAGED, paccountName: PRIMARY, serviceName: 'Location', type: SKU };
    const inputs: [string, unknown, (out: Record<string, unknown>) => void][] = [
      [
        'managedAccounts.list',
        { accountName: PRIMARY },
        (o) => expect(o.managedAccProvisionedList).to.have.length(1),
      ],
      [
        'managedAccounts.provision',
        { ...managed, txid: world.uuid(16, 1) },
        (o) => expect(o).to.include({ status: 'Success', txid: world.uuid(17, 1) }),
      ],
      [
        'managedAccounts.cancel',
        { ...managed, txid: world.uuid(17, 1) },
        (o) => expect(o.status).to.equal('Success'),
      ],
      ['accounts.get', { accountName: PRIMARY }, (o) => expect(o.accountName).to.equal(PRIMARY)],
      ['accounts.statesAndServices', { accountName: PRIMARY }, (o) => expect(o.engagement).to.have.length(1)],
      ['plans.list', { accountName: PRIMARY }, (o) => expect(o).to.have.length(5)],
      ['sms.history', { accountName: PRIMARY }, (o) => expect(o.messages).to.be.an('array')],
      ['sms.startCallbacks', { accountName: PRIMARY }, (o) => expect(o).to.deep.equal({ success: true })],
      ['location.subscription', { accountName: PRIMARY }, (o) => expect(o.locType).to.equal(SKU)],
      [
        'location.usage',
        { accountName: PRIMARY, startDate: '01-01-2026', endDate: '01-31-2026' },
        (o) => expect(o.transactions).to.equal(0),
      ],
      [
        'groups.create',
        {
          accountName: PRIMARY,
          groupName: 'Cold chain',
          groupDescription: 'Refrigerated',
          devicesToAdd: [imei],
        },
        (o) => expect(o).to.deep.equal({ success: true }),
      ],
      ['groups.list', { accountName: PRIMARY }, (o) => expect(o).to.have.length(5)],
      [
        'groups.get',
        { accountName: PRIMARY, groupName: 'North Fleet' },
        (o) => expect(o.devices).to.be.an('array'),
      ],
      [
        'groups.update',
        {
          accountName: PRIMARY,
          groupName: 'North Fleet',
          newGroupDescription: 'Trucks',
          devicesToAdd: [imei],
        },
        (o) => expect(o).to.deep.equal({ success: true }),
      ],
      [
        'groups.delete',
        { accountName: PRIMARY, groupName: 'Field Service' },
        (o) => expect(o.success).to.equal(true),
      ],
      [
        'devices.connectionHistory',
        { deviceId: imei, earliest: '2026-01-01T00:00:00Z', latest: '2026-01-05T00:00:00Z' },
        (o) => expect(o.connectionHistory).to.be.an('array'),
      ],
      [
        'devices.provisioningHistory',
        { deviceId: imei, earliest: '2024-01-01T00:00:00Z', latest: '2026-01-05T00:00:00Z' },
        (o) =>
          expect(
            (o as unknown as { provisioningHistory: unknown[] }[])[0]!.provisioningHistory,
          ).to.have.length(1),
      ],
      ['devices.suspensionStatus', { deviceIds: [imei] }, (o) => expect(o.requestId).to.be.a('string')],
      [
        'usage.aggregate',
        { accountNumber: PRIMARY, imei: [imei.id], startDate: '2025-12-01' },
        (o) => expect((o.usage as unknown[]).length).to.equal(1),
      ],
      [
        'usage.aggregateAsync',
        { accountName: PRIMARY, startTime: '2025-12-20T00:00:00Z', endTime: '2026-01-04T00:00:00Z' },
        (o) => expect(o.requestId).to.be.a('string'),
      ],
    ];
    expect(inputs.map(([action]) => action).sort()).to.deep.equal([...NEW].sort());
    for (const [action, body, check] of inputs) check(await call(action, body));
  });
});
