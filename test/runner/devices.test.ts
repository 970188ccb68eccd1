/**
 * What a step does to devices, as data: the devices an input names (each once, by kind), and device results
 * as the ledger's groups (one per kind and result, the last result of a device counting).
 */
import { expect } from 'chai';
import { ACTIONS, CATALOG, type Operation } from '../../src/api/catalog.js';
import { actionsOf, countDevices } from '../../src/runner/runner.js';
import {
  devicesOf,
  groupResults,
  idsOf,
  KindsOf,
  locationResult,
  refsOf,
  resultsOf,
  subset,
  withResult,
} from '../../src/runner/devices.js';
import type { InputError } from '../../src/errors.js';
import type { DeviceResult } from '../../src/store/store.js';
import { playbook } from './helpers.js';

const MISS = 'SVC CACHE UNAVAILABLE';

describe('runner: devices of a step', () => {
  it('declares, for each action, the member that must name a device exactly where its schema requires one', () => {
    // The runner skips a step given none (Operation.needsDevices) without loading the schemas to ask them.
    const fromSchema = (action: (typeof ACTIONS)[number]) => {
      const op: Operation = CATALOG[action];
      const props = (op.input as { properties?: Record<string, { minItems?: number }> }).properties ?? {};
      return ['devices', 'deviceList', op.devicesIn].find((m) => m && (props[m]?.minItems ?? 0) >= 1);
    };
    const declared = Object.fromEntries(ACTIONS.map((a) => [a, (CATALOG[a] as Operation).needsDevices]));
    expect(declared).to.deep.equal(Object.fromEntries(ACTIONS.map((a) => [a, fromSchema(a)])));
    expect(Object.values(declared).filter(Boolean)).to.have.length(8);
  });

  it('names each device of an input once, its first identifier, by kind in lower case, in order', () => {
    const input = {
      devices: [
        { id: '1', kind: 'IMEI' },
        {
          deviceIds: [
            { id: '2', kind: 'iccid' },
            { id: '9', kind: 'imei' },
          ],
        },
        { id: '1', kind: 'imei' },
        { id: '3', kind: 'imei' },
      ],
    };
    const set = devicesOf(CATALOG['devices.suspend'], input);
    expect(set).to.deep.equal({
      groups: [
        { kind: 'imei', ids: ['1', '3'] },
        { kind: 'iccid', ids: ['2'] },
      ],
      size: 3,
    });
    expect(idsOf(set)).to.deep.equal(['1', '3', '2']);
    expect(refsOf(set)).to.deep.equal([
      { id: '1', kind: 'imei' },
      { id: '3', kind: 'imei' },
      { id: '2', kind: 'iccid' },
    ]);
    expect(
      devicesOf(CATALOG['location.createReport'], { deviceList: [{ id: '5', kind: 'msisdn' }] }),
    ).to.deep.equal({
      groups: [{ kind: 'msisdn', ids: ['5'] }],
      size: 1,
    });
    expect(devicesOf(CATALOG['location.setExclusions'], { exclusion: ['7', '8', '7'] })).to.deep.equal({
      groups: [{ kind: 'imei', ids: ['7', '8'] }],
      size: 2,
    });
    // An SMS names its devices in a flat `deviceIds` list.
    expect(
      devicesOf(CATALOG['sms.send'], {
        deviceIds: [
          { id: '4', kind: 'MDN' },
          { id: '6', kind: 'imei' },
          { id: '4', kind: 'mdn' },
        ],
      }),
    ).to.deep.equal({
      groups: [
        { kind: 'mdn', ids: ['4'] },
        { kind: 'imei', ids: ['6'] },
      ],
      size: 2,
    });
    expect(devicesOf(CATALOG['devices.list'], { accountName: 'a' })).to.deep.equal({ groups: [], size: 0 });
  });

  it('names each device once whether its identifiers ascend (a listing) or not, a repeat at any place', () => {
    const flat = (...ids: string[]) => ({ devices: ids.map((id) => ({ id, kind: 'imei' })) });
    const of = (input: Record<string, unknown>, op: Operation = CATALOG['devices.suspend']) =>
      devicesOf(op, input);
    // Ascending: each comes first.
    expect(of(flat('1', '2', '3'))).to.deep.equal({
      groups: [{ kind: 'imei', ids: ['1', '2', '3'] }],
      size: 3,
    });
    // A repeat right after itself, or of the first after an ascending run, and every one after it.
    expect(of(flat('1', '2', '2', '3'))).to.deep.equal({
      groups: [{ kind: 'imei', ids: ['1', '2', '3'] }],
      size: 3,
    });
    expect(of(flat('1', '2', '3', '1', '4', '2', '0', '0'))).to.deep.equal({
      groups: [{ kind: 'imei', ids: ['1', '2', '3', '4', '0'] }],
      size: 5,
    });
    // A repeat of a device of another kind, given before in the list.
    const mixed = {
      devices: [
        { id: '1', kind: 'imei' },
        { id: '2', kind: 'iccid' },
        { id: '3', kind: 'imei' },
        { id: '2', kind: 'imei' },
      ],
    };
    expect(of(mixed)).to.deep.equal({
      groups: [
        { kind: 'imei', ids: ['1', '3'] },
        { kind: 'iccid', ids: ['2'] },
      ],
      size: 3,
    });
    expect(of({ exclusion: ['7', '8', '9', '8', '10'] }, CATALOG['location.setExclusions'])).to.deep.equal({
      groups: [{ kind: 'imei', ids: ['7', '8', '9', '10'] }],
      size: 4,
    });
  });

  it('refuses an identifier or a kind with a NUL character, naming where it is', () => {
    const problems = (op: Operation, input: Record<string, unknown>) => {
      try {
        devicesOf(op, input);
      } catch (e) {
        return (e as InputError).problems;
      }
      return [];
    };
    const why = (value: string) =>
      `the identifier ${JSON.stringify(value)} has a NUL character (U+0000): no device's has one, and the PostgreSQL store cannot keep one; nothing was sent`;
    expect(
      problems(CATALOG['devices.suspend'], {
        devices: [
          { id: '1', kind: 'imei' },
          { id: '2', kind: 'ic\0cid' },
        ],
      }),
    ).to.deep.equal([{ path: '/devices/1/kind', message: why('ic\0cid') }]);
    expect(
      problems(CATALOG['devices.suspend'], { devices: [{ deviceIds: [{ id: '4\u00005', kind: 'mdn' }] }] }),
    ).to.deep.equal([{ path: '/devices/0/deviceIds/0/id', message: why('4\u00005') }]);
    expect(problems(CATALOG['location.setExclusions'], { exclusion: ['7', '8\0'] })).to.deep.equal([
      { path: '/exclusion/1', message: why('8\0') },
    ]);
  });

  it('splits a set by identifiers, and gives its devices one result as ledger groups, counted', () => {
    const set = devicesOf(CATALOG['devices.suspend'], {
      devices: [
        { id: '1', kind: 'imei' },
        { id: '2', kind: 'iccid' },
        { id: '3', kind: 'imei' },
      ],
    });
    const applied = new Set(['2', '3']);
    expect(subset(set, applied, true)).to.deep.equal({
      groups: [
        { kind: 'imei', ids: ['3'] },
        { kind: 'iccid', ids: ['2'] },
      ],
      size: 2,
    });
    expect(subset(set, applied, false)).to.deep.equal({ groups: [{ kind: 'imei', ids: ['1'] }], size: 1 });
    const groups = withResult(set, {
      outcome: 'failed',
      errorType: MISS,
      errorClass: 'retryable',
      attempts: 2,
    });
    expect(groups).to.deep.equal([
      {
        outcome: 'failed',
        errorType: MISS,
        errorClass: 'retryable',
        attempts: 2,
        kind: 'imei',
        ids: ['1', '3'],
      },
      { outcome: 'failed', errorType: MISS, errorClass: 'retryable', attempts: 2, kind: 'iccid', ids: ['2'] },
    ]);
    expect(countDevices(groups)).to.deep.equal({
      total: 3,
      accepted: 0,
      succeeded: 0,
      failed: 3,
      skipped: 0,
      unconfirmed: 0,
      byError: { [MISS]: 3 },
    });
  });

  it('groups per-device results by result, the last result of a device counting', () => {
    const ok = (id: string, attempts = 1): DeviceResult => ({
      deviceId: id,
      kind: 'imei',
      outcome: 'succeeded',
      attempts,
    });
    const miss = (id: string): DeviceResult => ({
      deviceId: id,
      kind: 'imei',
      outcome: 'failed',
      errorType: MISS,
      errorClass: 'retryable',
      attempts: 1,
    });
    const groups = groupResults([ok('a'), miss('b'), ok('c'), miss('a'), ok('b', 2)]);
    expect(groups).to.have.length(3);
    expect(resultsOf(groups).sort((x, y) => x.deviceId.localeCompare(y.deviceId))).to.deep.equal([
      miss('a'),
      ok('b', 2),
      ok('c'),
    ]);
    expect(countDevices(groups)).to.include({ total: 3, succeeded: 2, failed: 1 });
    // Results known to name each device once are grouped alike, without the check.
    const once = [ok('a'), miss('b'), ok('c'), miss('d')];
    expect(groupResults(once, true)).to.deep.equal(groupResults(once));
  });

  it('finds the API actions a playbook uses, in nested steps, polls and finally, each once', () => {
    const pb = playbook(`
version: 1
name: actions
on: { manual: true }
steps:
  - id: look
    uses: devices.list
    with: { accountName: "0000123456-00001" }
  - id: each
    forEach:
      items: \${{ steps.look.items }}
      batchSize: 100
      steps:
        - id: both
          parallel:
            - id: stop
              uses: devices.suspend
              with: { accountName: "0000123456-00001", devices: \${{ item }} }
              onError:
                - id: undo
                  uses: devices.restore
                  with: { accountName: "0000123456-00001", devices: \${{ item }} }
            - id: again
              uses: devices.list
              with: { accountName: "0000123456-00001" }
  - id: report
    wait:
      event: { service: Location }
      timeout: 1m
      poll:
        uses: location.getReportStatus
        with: { accountName: "0000123456-00001", txid: "t" }
        until: \${{ event.status == "COMPLETED" }}
  - id: say
    uses: log
    with: { message: done }
finally:
  - id: tell
    uses: notify.webhook
    with: { url: "http://127.0.0.1:9/hook", body: {} }
  - id: last
    uses: devices.deactivate
    with: { accountName: "0000123456-00001", devices: [{ id: "353456780000001", kind: imei }] }
`);
    expect(actionsOf(pb)).to.deep.equal([
      'devices.list',
      'devices.suspend',
      'devices.restore',
      'location.getReportStatus',
      'devices.deactivate',
    ]);
  });

  it("gives each location entry its requested device's kind, whatever order the entries come in", () => {
    const set = devicesOf(CATALOG['location.createReport'], {
      deviceList: [
        { id: 'a1', kind: 'IMEI' },
        { id: 'b1', kind: 'msisdn' },
        { id: 'a2', kind: 'imei' },
        { id: 'a3', kind: 'imei' },
        { id: 'b2', kind: 'MSISDN' },
      ],
    });
    const kinds = (order: string[]) => {
      const requested = new KindsOf(set);
      return order.map(
        (msid) =>
          locationResult({ msid, error: { type: 'X' } }, requested, 1, { at: 0, action: 'location.locate' })
            .kind,
      );
    };
    // In the order sent, kind after kind; then out of that order, with a device sent again, and one not sent.
    expect(kinds(['a1', 'a2', 'a3', 'b1', 'b2'])).to.deep.equal(['imei', 'imei', 'imei', 'msisdn', 'msisdn']);
    expect(kinds(['b2', 'a2', 'a3', 'b1', 'a1', 'zz', 'a2', 'b2'])).to.deep.equal([
      'msisdn',
      'imei',
      'imei',
      'msisdn',
      'imei',
      'msid',
      'imei',
      'msisdn',
    ]);
    expect(kinds(['a3', 'b1', 'b2'])).to.deep.equal(['imei', 'msisdn', 'msisdn']);
    expect(new KindsOf({ groups: [], size: 0 }).kindOf('a1')).to.equal(undefined);
  });
});
