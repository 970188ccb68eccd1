/**
 * What `validate` says of reading a step inside a forEach after the loop, as the runner reads it then
 * (runner/after-loop.ts). Before, it accepted every read, and the run read made-up values: a listing's items `[]`,
 * an output `null`. Now it refuses, at the read, the output (each iteration had its own) and the items the run
 * cannot know (a listing's or a ledger query's, each iteration found its own; a device action's after a loop
 * inside another), and accepts the rest: status, devices, error, reason, and a device action's items after the
 * outermost loop (its results over every iteration, from the ledger).
 */
import { expect } from 'chai';
import { loadPlaybook } from '../../src/playbook/load.js';

const ACCOUNT = "'0000123456-00001'";

const found = (steps: string[]) =>
  loadPlaybook(
    ['version: 1', 'name: t', 'on: { manual: true }', 'steps:', ...steps].join('\n'),
    't.yaml',
  ).diagnostics.map((d) => `${d.line}:${d.column} ${d.rule} ${d.message}`);

/** A forEach `each` over two accounts: a listing `usage`, then a locate of its devices. */
const LOOP = [
  '  - id: each',
  '    forEach:',
  "      items: ['0000123456-00001', '0000123456-00002']",
  '      steps:',
  '        - id: usage',
  '          uses: devices.list',
  '          with: { accountName: "${{ item }}" }',
  '        - id: locate',
  '          uses: location.locate',
  '          with: { accountName: "${{ item }}", deviceList: "${{ steps.usage.items }}" }',
  '        - id: inside',
  '          uses: log',
  '          with: { message: "${{ size(steps.usage.items) }} ${{ steps.usage.output.count }}" }',
];

const after = (message: string) => ['  - id: after', '    uses: log', `    with: { message: "${message}" }`];

describe('validate: a step inside a forEach, read after the loop', () => {
  it("refuses a listing's items, naming the loop", () => {
    expect(found([...LOOP, ...after('${{ size(steps.usage.items) }}')])).to.deep.equal([
      '20:32 step-items `steps.usage.items` cannot be read after forEach `each`: each of its iterations found its own, and they are not kept together; read them inside the loop',
    ]);
  });

  it("refuses an output, pointing at the loop's own", () => {
    expect(found([...LOOP, ...after('${{ steps.locate.output }}')])).to.deep.equal([
      "20:27 member `steps.locate.output` has no value after forEach `each`: each of its iterations had its own; read it inside the loop (the loop's own, `steps.each.output`, is `{ iterations, failed }`)",
    ]);
  });

  it("accepts a device action's items after the outermost loop, and every step's status and counts", () => {
    expect(
      found([
        ...LOOP,
        ...after(
          '${{ size(steps.locate.items) }} ${{ steps.usage.status }} ${{ steps.usage.devices.total }} ${{ steps.locate.error }} ${{ steps.locate.reason }}',
        ),
      ]),
    ).to.deep.equal([]);
  });

  it("refuses a device action's items after a loop inside another, and accepts them after the outer one", () => {
    const nested = [
      '  - id: rounds',
      '    forEach:',
      '      items: [1, 2]',
      '      steps:',
      '        - id: batches',
      '          forEach:',
      "            items: [[{ id: '353456789012345', kind: imei }]]",
      '            steps:',
      '              - id: locate',
      '                uses: location.locate',
      `                with: { accountName: ${ACCOUNT}, deviceList: "\${{ item }}" }`,
      '        - id: between',
      '          uses: log',
      '          with: { message: "${{ size(steps.locate.items) }}" }',
      ...after('${{ size(steps.locate.items) }}'),
    ];
    expect(found(nested)).to.deep.equal([
      '18:38 step-items `steps.locate.items` cannot be read after forEach `batches`, which runs inside forEach `rounds`: its per-device results over every iteration are read from the ledger only after `rounds`; read them inside the loop, or after `rounds`',
    ]);
  });
});
