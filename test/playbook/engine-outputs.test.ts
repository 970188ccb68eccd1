/**
 * The output of an engine action (`log`, `report.write`, `ledger.query`, `notify.webhook`) was read freely by
 * `validate`: `steps.missed.output.cuont > 0` passed, and failed the run when it got there. Their outputs now
 * have types, as an API action's has from its schema: a member they do not have is refused at its line and
 * column, with the one meant. The types are those the engine gives: a real run, through the built binary,
 * logs the members of each output, which are the members validate knows.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadPlaybook } from '../../src/playbook/load.js';
import { outputType } from '../../src/playbook/types.js';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const STEPS = [
  '  - id: say',
  '    uses: log',
  '    with: { message: hi }',
  '  - id: missed',
  '    uses: ledger.query',
  '    with: { playbook: nightly-location-report }',
  '  - id: save',
  '    uses: report.write',
  "    with: { path: 'out.json', rows: '${{ [{\"a\": 1}] }}' }",
  '  - id: hook',
  '    uses: notify.webhook',
  "    with: { url: 'https://hooks.example.com/x', body: { text: hi } }",
  '    onError: continue',
];

const problems = (read: string) =>
  loadPlaybook(
    [
      'version: 1',
      'name: t',
      'on: { manual: true }',
      'steps:',
      ...STEPS,
      '  - id: tell',
      '    uses: log',
      `    with: { message: 'n', fields: { n: '\${{ ${read} }}' } }`,
    ].join('\n'),
    't.yaml',
  ).diagnostics.map((d) => `${d.line}:${d.column} ${d.rule} ${d.message}`);

/** The members validate knows of an engine action's output. */
const members = (action: string) => {
  const t = outputType(action);
  return t.k === 'object' ? Object.keys(t.fields).sort() : [];
};

describe('validate: the outputs of engine actions', () => {
  for (const [read, meant] of [
    ['steps.missed.output.cuont', 'count'],
    ['steps.missed.output.devices[0].stepp', 'step'],
    ['steps.save.output.pth', 'path'],
    ['steps.hook.output.stauts', 'status'],
    ['steps.say.output.mesage', 'message'],
  ] as const) {
    it(`refuses \`${read}\`, at the member, with the one meant`, () => {
      const found = problems(read);
      expect(found).to.have.length(1);
      // `    with: { message: 'n', fields: { n: '${{ ` is 44 characters; the member follows its object.
      const col = 45 + read.lastIndexOf('.') + 1;
      expect(found[0]).to.match(new RegExp(`^20:${col} member `));
      expect(found[0]).to.include(`(did you mean \`${meant}\`?)`);
    });
  }

  for (const read of [
    'steps.missed.output.count > 0',
    'steps.missed.output.devices.map(d, d.runId + d.step + d.id + d.kind + d.outcome)',
    'steps.missed.output.devices[0].error != ""',
    'string(steps.save.output.rows) + steps.save.output.file + steps.save.output.path + steps.save.output.format',
    'steps.save.output.replaced',
    'steps.hook.output.status == 200',
    'steps.say.output.message',
  ])
    it(`passes \`${read}\``, () => expect(problems(read)).to.deep.equal([]));

  it('knows the members a real run gives (built binary, embedded emulator)', async function () {
    this.timeout(60_000);
    const tmp = tempDir('fleetbook-engine-outputs-');
    const file = join(tmp, 'outputs.yaml');
    const keys = (id: string) => `'\${{ steps.${id}.output }}'`;
    await writeFile(
      file,
      [
        'version: 1',
        'name: outputs',
        'on: { manual: true }',
        'steps:',
        ...STEPS.slice(0, 9),
        '  - id: tell',
        '    uses: log',
        `    with: { message: shapes, fields: { say: ${keys('say')}, missed: ${keys('missed')}, save: ${keys('save')} } }`,
      ].join('\n'),
    );
    const r = await fleetbook(['run', file], {
      FLEETBOOK_STATE: join(tmp, 'state.db'),
      FLEETBOOK_REPORTS_DIR: join(tmp, 'reports'),
      FLEETBOOK_LOG_LEVEL: 'info',
    });
    expect(r.code, r.stderr).to.equal(0);
    const line = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, Record<string, unknown>>)
      .find((l) => (l.message as unknown) === 'shapes');
    expect(line, r.stderr).to.not.equal(undefined);
    const given = (id: string) => Object.keys(line?.[id] ?? {}).sort();
    expect(given('say')).to.deep.equal(members('log'));
    expect(given('missed')).to.deep.equal(members('ledger.query'));
    expect(given('save')).to.deep.equal(members('report.write'));
  });
});
