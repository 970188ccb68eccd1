/**
 * Invalid inputs are rejected before anything is sent: an InputError (FB_INPUT, permanent) listing every
 * problem with its JSON path, and not one request at the server: no token, no login, no call.
 */
import { expect } from 'chai';

import { InputError, UnknownActionError } from '../../src/errors.js';
import { notification } from '../helpers/action-cases.js';
import { onRecorder } from '../helpers/recorder.js';

const ACC = '0000123456-00001';
const imei = (i: number) => String(350000000000000 + i);
const devices = (n: number) => Array.from({ length: n }, (_, i) => ({ id: imei(i), kind: 'imei' }));

/** A valid pay-as-you-go trigger, with its condition and action overridden. */
function payAsYouGo(condition: Record<string, unknown>, action: Record<string, unknown>) {
  return {
    triggerName: 't',
    ecpdId: '1234567',
    triggerCategory: 'PricePlanDataUsage',
    pricePlanTrigger: {
      payAsYouGo: {
        filterCriteria: { carrierServicePlanCode: '84777', accountNameList: [ACC] },
        condition,
        action,
      },
    },
    notification,
    active: true,
  };
}
const individual = { conditionType: 'Individual', comparator: 'gt', threshold: 5, cycleType: 'Daily' };
const accountLevel = { ...individual, conditionType: 'AccountLevel' };
const PAYG = '/pricePlanTrigger/payAsYouGo';

interface Case {
  name: string;
  action: string;
  input: unknown;
  /** Each expected problem: its JSON path, and a fragment of its message. */
  problems: [path: string, message: RegExp][];
  /** These problems and no other. */
  only?: boolean;
}

const CASES: Case[] = [
  {
    name: 'cacheMode "5"',
    action: 'location.locate',
    input: { accountName: ACC, deviceList: devices(1), cacheMode: '5' },
    problems: [['/cacheMode', /cacheMode must be one of "0", "1", "2"/]],
  },
  {
    name: '10,001 devices in location.locate',
    action: 'location.locate',
    input: { accountName: ACC, deviceList: devices(10_001) },
    problems: [['/deviceList', /10001 items; at most 10000/]],
  },
  {
    name: '2,001 exclusions',
    action: 'location.setExclusions',
    input: { accountName: ACC, type: 'replace', exclusion: devices(2_001).map((d) => d.id) },
    problems: [['/exclusion', /2001 items; at most 2000/]],
  },
  {
    name: 'duplicate device ids',
    action: 'location.createReport',
    input: { accountName: ACC, deviceList: [...devices(3), { id: imei(1), kind: 'IMEI' }] },
    problems: [['/deviceList', /duplicate id/]],
  },
  {
    name: 'allDevice true with an exclusion list',
    action: 'location.setExclusions',
    input: { accountName: ACC, allDevice: true, exclusion: [imei(1)] },
    problems: [['/', /allDevice true cannot be sent together with an exclusion list/]],
  },
  {
    name: 'suspend and changePlan both true',
    action: 'triggers.createPayAsYouGo',
    input: payAsYouGo(individual, {
      suspend: true,
      suspendDetails: { suspendDuration: '30' },
      changePlan: true,
      changePlanDetails: { toCarrierServicePlanCode: '99' },
    }),
    problems: [[`${PAYG}/action`, /suspend and changePlan must not both be true/]],
  },
  {
    name: 'suspend without suspendDetails',
    action: 'triggers.createPayAsYouGo',
    input: payAsYouGo(individual, { suspend: true }),
    problems: [[`${PAYG}/action/suspendDetails`, /suspendDetails are required when suspend is true/]],
  },
  {
    name: 'AccountLevel suspend without suspendDetails.threshold',
    action: 'triggers.createPayAsYouGo',
    input: payAsYouGo(accountLevel, {
      suspend: true,
      suspendDetails: { suspendDuration: '30', thresholdUnit: 'GB' },
    }),
    problems: [[`${PAYG}/action/suspendDetails/threshold`, /threshold is required/]],
  },
  {
    name: 'Individual changePlan without changePlanDetails',
    action: 'triggers.createPayAsYouGo',
    input: payAsYouGo(individual, { changePlan: true }),
    problems: [
      [`${PAYG}/action/changePlanDetails`, /changePlanDetails are required when changePlan is true/],
    ],
  },
  {
    name: 'Individual by default (no conditionType) changePlan without changePlanDetails',
    action: 'triggers.createPayAsYouGo',
    input: payAsYouGo({ comparator: 'gt', threshold: 5, cycleType: 'Daily' }, { changePlan: true }),
    problems: [[`${PAYG}/action/changePlanDetails`, /changePlanDetails are required/]],
  },
  {
    name: 'Aging without agingDetails',
    action: 'triggers.createPayAsYouGo',
    input: payAsYouGo({ conditionType: 'Aging' }, {}),
    problems: [[`${PAYG}/action/agingDetails`, /agingDetails are required for conditionType Aging/]],
  },
  {
    name: 'Individual without comparator, threshold and cycleType',
    action: 'triggers.createPayAsYouGo',
    input: payAsYouGo({ conditionType: 'Individual' }, {}),
    problems: [
      [`${PAYG}/condition/comparator`, /comparator is required/],
      [`${PAYG}/condition/threshold`, /threshold is required/],
      [`${PAYG}/condition/cycleType`, /cycleType is required/],
    ],
  },
  {
    name: 'a bad account name',
    action: 'location.getExclusions',
    input: { accountName: '123456-1' },
    problems: [['/accountName', /accountName "123456-1" is not valid: .*10 digits, a hyphen, then 5 digits/]],
  },
  {
    name: 'a bad IMEI for kind imei',
    action: 'location.locate',
    input: { accountName: ACC, deviceList: [{ id: '35345678901234X', kind: 'imei' }] },
    problems: [['/deviceList/0/id', /"35345678901234X" is not valid/]],
  },
  {
    name: 'a bad IMEI for kind IMEI in a connectivity device list',
    action: 'devices.suspend',
    input: { accountName: ACC, devices: [{ id: '1234', kind: 'IMEI' }] },
    problems: [['/devices/0/id', /"1234" is not valid/]],
  },
  {
    name: 'one clear problem per bad device, flat or nested, not one per shape a device may take',
    action: 'devices.suspend',
    input: {
      accountName: ACC,
      devices: [
        { id: '123', kind: 'imei' },
        { id: '1', kind: 'foo' },
        { deviceIds: [{ id: 'x', kind: 'iccid' }] },
        'abc',
        { id: 5, kind: 'imei' },
        { id: imei(1) },
        { id: imei(2), kind: 'imei' },
        { id: '', kind: 'imei' },
        { deviceIds: [{ id: '', kind: 'mdn' }] },
      ],
    },
    problems: [
      ['/devices/0/id', /^id "123" is not valid: an IMEI is 15 digits$/],
      ['/devices/1/kind', /^kind must be one of "imei", "IMEI", "iccid"/],
      ['/devices/2/deviceIds/0/id', /^id "x" is not valid: an ICCID is 20 digits$/],
      ['/devices/3', /^item 3 of devices must be object$/],
      ['/devices/4/id', /^id must be string$/],
      ['/devices/5/kind', /^kind is required$/],
      // An empty id is refused by the format of its kind.
      ['/devices/7/id', /^id "" is not valid: an IMEI is 15 digits$/],
      ['/devices/8/deviceIds/0/id', /^id "" is not valid: an MDN is 10 digits$/],
    ],
    only: true,
  },
  {
    name: 'an ICCID that is not 20 digits',
    action: 'devices.attributes',
    input: { deviceId: { id: '8914800000123456789', kind: 'iccid' } },
    problems: [['/deviceId/id', /"8914800000123456789" is not valid/]],
  },
  {
    name: 'an unknown field',
    action: 'location.getReportStatus',
    input: { accountName: ACC, txid: 'abc', txId: 'abc' },
    problems: [['/txId', /unknown field `txId`/]],
  },
  {
    name: 'a missing required field',
    action: 'usageTriggers.delete',
    input: { accountName: ACC },
    problems: [['/triggerId', /triggerId is required/]],
  },
];

describe('invalid inputs are rejected before anything is sent', () => {
  const t = onRecorder();

  for (const c of CASES) {
    it(`${c.action}: ${c.name}`, async () => {
      let err: unknown;
      try {
        await t.client.callByName(c.action, c.input);
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(InputError);
      const e = err as InputError;
      expect(e.code).to.equal('FB_INPUT');
      expect(e.retryClass).to.equal('permanent');
      expect(e.action).to.equal(c.action);
      for (const [path, message] of c.problems) {
        const at = e.problems.filter((p) => p.path === path);
        expect(at, `a problem at ${path} in ${JSON.stringify(e.problems)}`).to.have.length.greaterThan(0);
        expect(at.map((p) => p.message).join('\n')).to.match(message);
        // The message names each problem with its path.
        expect(e.message).to.include(`${path}: `);
      }
      if (c.only) expect(e.problems.map((p) => p.path)).to.deep.equal(c.problems.map(([path]) => path));
      expect(e.toJSON()).to.deep.include({ code: 'FB_INPUT', action: c.action, retryClass: 'permanent' });
      expect(t.rec.requests, 'no request reached the server').to.deep.equal([]);
    });
  }

  it('the typed methods validate too', async () => {
    let err: unknown;
    try {
      await t.client.location.locate({ accountName: ACC, deviceList: devices(1), cacheMode: '5' });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(InputError);
    expect(t.rec.requests).to.deep.equal([]);
  });

  it('an unknown action is refused with close names, and nothing is sent', async () => {
    let err: unknown;
    try {
      await t.client.callByName('location.locat', { accountName: ACC });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(UnknownActionError);
    expect((err as UnknownActionError).suggestions).to.include('location.locate');
    expect(t.rec.requests).to.deep.equal([]);
  });

  it('the valid neighbour of each cross-field case is accepted (the rules are not over-strict)', async () => {
    const ok: [string, unknown][] = [
      [
        'triggers.createPayAsYouGo',
        payAsYouGo(individual, { suspend: true, suspendDetails: { suspendDuration: '30' } }),
      ],
      [
        'triggers.createPayAsYouGo',
        payAsYouGo(accountLevel, { suspend: true, suspendDetails: { threshold: 10, thresholdUnit: 'GB' } }),
      ],
      [
        'triggers.createPayAsYouGo',
        payAsYouGo({ conditionType: 'Aging' }, { agingDetails: { onNumberOfBillCycle: 2 } }),
      ],
      // Neither comparator, threshold nor cycleType is needed for UsageAllowance.
      ['triggers.createPayAsYouGo', payAsYouGo({ conditionType: 'UsageAllowance' }, {})],
      ['location.setExclusions', { accountName: ACC, allDevice: true, exclusion: [] }],
      ['location.setExclusions', { accountName: ACC, exclusion: devices(2_000).map((d) => d.id) }],
      ['location.locate', { accountName: ACC, deviceList: devices(10_000) }],
    ];
    for (const [action, input] of ok) await t.client.callByName(action, input);
    expect(t.rec.apiRequests()).to.have.length(ok.length);
  });
});
