/**
 * `steps.<id>.items` of a step that never has per-device items was always an empty list: a playbook that passed
 * a `report.write`'s or a plain call's "items" to a device action acted on no device, and its run succeeded.
 * `validate` now refuses the read at its line and column, and says which steps have items. Steps that do are
 * not touched: listings, device actions, location steps, ledger queries, calls that name devices.
 */
import { expect } from 'chai';
import { loadPlaybook } from '../../src/playbook/load.js';

const ACCOUNT = "'0000123456-00001'";

const found = (steps: string[]) =>
  loadPlaybook(['version: 1', 'name: t', 'on: { manual: true }', 'steps:', ...steps].join('\n'), 't.yaml')
    .diagnostics.filter((d) => d.rule === 'step-items' || d.severity === 'error')
    .map((d) => `${d.line}:${d.column} ${d.rule} ${d.message}`);

/** A step `x` given as `first`, then a log that reads `steps.x.items`. */
const reading = (...first: string[]) => [
  ...first,
  '  - id: tell',
  '    uses: log',
  "    with: { message: 'n', fields: { n: '${{ size(steps.x.items) }}' } }",
];

describe('validate: the items of a step that has none', () => {
  for (const [what, step] of [
    ['a report.write', ['  - id: x', '    uses: report.write', '    with: { path: r.csv }']],
    ['a log', ['  - id: x', '    uses: log', '    with: { message: hi }']],
    [
      'a plain read of no device',
      ['  - id: x', '    uses: plans.list', `    with: { accountName: ${ACCOUNT} }`],
    ],
    ['a wait', ['  - id: x', '    wait: 1s']],
    [
      'a forEach',
      [
        '  - id: x',
        '    forEach:',
        '      items: [1, 2]',
        '      steps: [{ id: y, uses: log, with: { message: hi } }]',
      ],
    ],
  ] as const) {
    it(`refuses reading the items of ${what}, at the read`, () => {
      const problems = found(reading(...step));
      expect(problems).to.have.length(1);
      expect(problems[0]).to.match(/^\d+:\d+ step-items `steps\.x\.items` is always empty: /);
      expect(problems[0]).to.include('steps.x.output');
    });
  }

  for (const [what, step] of [
    ['a device listing', ['  - id: x', '    uses: devices.list', `    with: { accountName: ${ACCOUNT} }`]],
    [
      'a device action',
      [
        '  - id: x',
        '    uses: devices.suspend',
        `    with: { accountName: ${ACCOUNT}, devices: [{ id: '350000000000001', kind: imei }] }`,
      ],
    ],
    [
      'a location report',
      [
        '  - id: x',
        '    uses: location.createReport',
        `    with: { accountName: ${ACCOUNT}, deviceList: [{ id: '350000000000001', kind: imei }] }`,
      ],
    ],
    ['a ledger query', ['  - id: x', '    uses: ledger.query', '    with: { playbook: other }']],
    [
      'an SMS to devices',
      [
        '  - id: x',
        '    uses: sms.send',
        `    with: { accountName: ${ACCOUNT}, deviceIds: [{ id: '350000000000001', kind: imei }], smsMessage: hi }`,
      ],
    ],
  ] as const) {
    it(`accepts reading the items of ${what}`, () => {
      expect(found(reading(...step))).to.deep.equal([]);
    });
  }

  describe('report.write of a step’s per-device results', () => {
    const writing = (...first: string[]) => [
      ...first,
      '  - id: out',
      '    uses: report.write',
      '    with: { path: r.csv, step: x }',
    ];
    for (const [what, step] of [
      [
        'a plain read of no device',
        ['  - id: x', '    uses: plans.list', `    with: { accountName: ${ACCOUNT} }`],
      ],
      ['a device listing', ['  - id: x', '    uses: devices.list', `    with: { accountName: ${ACCOUNT} }`]],
      ['a ledger query', ['  - id: x', '    uses: ledger.query', '    with: { playbook: other }']],
      ['a log', ['  - id: x', '    uses: log', '    with: { message: hi }']],
    ] as const) {
      it(`refuses ${what}, whose report would be empty, saying what to write instead`, () => {
        const problems = found(writing(...step));
        expect(problems).to.have.length(1);
        expect(problems[0]).to.match(/^\d+:\d+ step-items `x` has no per-device results: /);
        expect(problems[0]).to.include('rows:');
      });
    }
    it('accepts a device action', () => {
      expect(
        found(
          writing(
            '  - id: x',
            '    uses: devices.suspend',
            `    with: { accountName: ${ACCOUNT}, devices: [{ id: '350000000000001', kind: imei }] }`,
          ),
        ),
      ).to.deep.equal([]);
    });
  });
});
