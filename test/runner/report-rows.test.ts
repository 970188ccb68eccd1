/**
 * `report.write` of any list a playbook builds (`rows:`), with the columns it names (`columns:`), as CSV and as
 * JSON; and the sources it refuses: `rows` beside `step`, or a `rows` that is not a list of objects, at
 * validate time where the YAML shows it (file:line:col) and otherwise as a failed step that wrote nothing.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { engineSettings } from '../../src/actions/settings.js';
import type { Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import { registerSecret } from '../../src/util/secrets.js';
import { csvObjects, parseCsv } from '../helpers/csv.js';
import { clientFor, emulator, memoryStore, playbook, type Json } from './helpers.js';
import { tempDir } from '../helpers/temp.js';

describe('report.write: rows and columns', function () {
  this.timeout(30_000);
  let emu: Emulator;
  let client: Client;
  let store: SqliteStore;
  let account: string;
  let tmp: string;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 30 });
    account = emu.defaults.accounts[0]!;
    client = clientFor(emu);
    store = memoryStore();
    tmp = tempDir('fleetbook-report-rows-');
  });
  after(async () => {
    await store.close();
    await client.close();
    await emu.close();
  });

  const run = (yaml: string, inputs: Json = {}) =>
    runPlaybook(playbook(yaml), {
      client,
      store,
      inputs,
      engine: engineSettings({ reportsDir: tmp }),
    });
  const read = (name: string) => readFile(join(tmp, name), 'utf8');

  it('writes exactly the listed columns of a device listing, dotted paths included, in CSV and JSON', async () => {
    const s = await run(
      `
version: 1
name: device-listing
on: { manual: true }
inputs:
  account: { type: string, required: true }
steps:
  - id: list
    uses: devices.list
    with: { accountName: \${{ inputs.account }} }
  - id: csv
    uses: report.write
    with:
      path: listing.csv
      rows: \${{ steps.list.output.devices }}
      columns: [deviceIds.0.id, carrierInformations.0.state, connected, groupNames, customFields.0.value, missing]
  - id: json
    uses: report.write
    with:
      path: listing.json
      rows: \${{ steps.list.output.devices }}
      columns: [deviceIds.0.id, carrierInformations.0.state, connected, groupNames, customFields.0.value, missing]
`,
      { account },
    );
    expect(s.status, s.error).to.equal('succeeded');
    const devices: Json[] = [];
    for await (const d of client.items('devices.list', { accountName: account })) devices.push(d as Json);
    expect(devices.length).to.be.greaterThan(10);
    const first = (d: Json, key: string) => (d[key] as Json[])[0]!;

    const csv = csvObjects(await read('listing.csv'));
    expect(csv.header).to.deep.equal([
      'deviceIds.0.id',
      'carrierInformations.0.state',
      'connected',
      'groupNames',
      'customFields.0.value',
      'missing',
    ]);
    expect(csv.rows).to.deep.equal(
      devices.map((d) => ({
        'deviceIds.0.id': String(first(d, 'deviceIds').id),
        'carrierInformations.0.state': String(first(d, 'carrierInformations').state),
        connected: String(d.connected),
        // A nested value is written as its JSON text.
        groupNames: JSON.stringify(d.groupNames),
        'customFields.0.value': String(first(d, 'customFields').value),
        missing: '',
      })),
    );

    const json = JSON.parse(await read('listing.json')) as Json[];
    expect(json).to.deep.equal(
      devices.map((d) => ({
        'deviceIds.0.id': first(d, 'deviceIds').id,
        'carrierInformations.0.state': first(d, 'carrierInformations').state,
        connected: d.connected,
        groupNames: d.groupNames,
        'customFields.0.value': first(d, 'customFields').value,
      })),
    );
    // The step says what it wrote.
    const csvStep = s.steps.find((x) => x.id === 'csv');
    expect(csvStep?.status).to.equal('succeeded');
  });

  it('without columns, writes the union of the keys in order of first appearance; cells are escaped', async () => {
    registerSecret('hunter2-very-secret');
    const s = await run(`
version: 1
name: literal-rows
on: { manual: true }
steps:
  - id: csv
    uses: report.write
    with:
      path: literal.csv
      rows:
        - { a: 1, b: "x,y" }
        - { c: { d: [1, 2] }, b: 'say "hi"', a: -2.5 }
        - { e: "=HYPERLINK(\\"http://x\\")", note: "line one\\nline two", pass: hunter2-very-secret }
  - id: json
    uses: report.write
    with:
      path: literal.json
      rows: [{ a: 1, n: null }, { b: true, note: "uses hunter2-very-secret" }]
  - id: empty
    uses: report.write
    with: { path: empty.csv, rows: [], columns: [a, b] }
`);
    expect(s.status, s.error).to.equal('succeeded');
    const records = parseCsv(await read('literal.csv'));
    expect(records).to.deep.equal([
      ['a', 'b', 'c', 'e', 'note', 'pass'],
      ['1', 'x,y', '', '', '', ''],
      ['-2.5', 'say "hi"', '{"d":[1,2]}', '', '', ''],
      // A text cell that a spreadsheet would run as a formula is written as text; a secret never.
      ['', '', '', `'=HYPERLINK("http://x")`, 'line one\nline two', '***'],
    ]);
    expect(JSON.parse(await read('literal.json'))).to.deep.equal([
      { a: 1, n: null },
      { b: true, note: 'uses ***' },
    ]);
    expect(await read('empty.csv')).to.equal('a,b\n');
  });

  it('refuses rows beside step, and rows that are not a list of objects, at validate time with line:col', () => {
    const yaml = `version: 1
name: two-sources
on: { manual: true }
steps:
  - id: both
    uses: report.write
    with: { path: a.csv, step: both, rows: [{ a: 1 }] }
  - id: scalar
    uses: report.write
    with: { path: b.csv, rows: 5 }
  - id: text
    uses: report.write
    with: { path: c.csv, rows: "devices: \${{ run.id }}" }
  - id: not_objects
    uses: report.write
    with: { path: d.csv, rows: [1, 2] }
  - id: columns
    uses: report.write
    with: { path: e.csv, rows: [{ a: 1 }], columns: [] }
`;
    const loaded = loadPlaybook(yaml, 'two-sources.yaml');
    const errors = loaded.diagnostics
      .filter((d) => d.severity === 'error')
      .map((d) => `${d.line}:${d.column} [${d.rule}] ${d.message}`);
    expect(loaded.playbook).to.equal(undefined);
    expect(errors).to.deep.equal([
      '7:32 [step-reference] step `both` does not run before this point, so `steps.both` has no value here',
      "7:38 [with] report.write: `rows` and `step` are two sources of rows: give `rows` (a list of objects) or `step` (a step's per-device results), not both",
      '10:32 [with] report.write: rows must be array',
      '13:32 [with] report.write: `rows` must be a list of objects, but "devices: ${{ run.id }}" is text with an expression inside it, always a string: write the whole value as one expression, ${{ ... }}',
      '16:33 [with] report.write: item 0 of rows must be object',
      '16:36 [with] report.write: item 1 of rows must be object',
      '19:53 [with] report.write: columns must have at least 1 item',
    ]);
  });

  it('fails the step, writing nothing, for rows computed to something other than a list of objects', async () => {
    const cases: [name: string, withArgs: string, problem: RegExp][] = [
      [
        'number',
        // Of a list of mixed elements: a value validate cannot type, checked as the step runs.
        `{ path: n.csv, rows: "\${{ [5, 'a'][0] }}" }`,
        /\/rows: rows must be a list of objects, got a number/,
      ],
      [
        'scalars',
        `{ path: s.csv, rows: "\${{ [1, 'a'] }}" }`,
        /\/rows\/0: item 0 of rows must be an object, got a number/,
      ],
      [
        'lists',
        `{ path: l.csv, rows: "\${{ [{'a': 1}, [2]] }}" }`,
        /\/rows\/1: item 1 of rows must be an object, got a list/,
      ],
      [
        'columns',
        `{ path: c.csv, rows: [{ a: 1 }], columns: "\${{ ['a', 1][0] }}" }`,
        /\/columns: columns must be a list of strings, got a string/,
      ],
      [
        'both',
        `"\${{ {'path': 'b.csv', 'step': 'x', 'rows': [{'a': 1}]} }}"`,
        /`rows` and `step` are two sources/,
      ],
    ];
    for (const [name, args, problem] of cases) {
      const s = await run(`
version: 1
name: bad-rows-${name}
on: { manual: true }
steps:
  - id: out
    uses: report.write
    with: ${args}
`);
      expect(s.status, name).to.equal('failed');
      expect(s.error, name).to.match(/^step `out` failed: report\.write: invalid input/);
      expect(s.error, name).to.match(problem);
      // No attempt: an input that is wrong stays wrong, and is checked before the first.
      expect(s.steps.find((x) => x.id === 'out')?.attempts, name).to.equal(0);
    }
    for (const file of ['n.csv', 's.csv', 'l.csv', 'c.csv', 'b.csv'])
      expect(existsSync(join(tmp, file)), file).to.equal(false);
  });
});
