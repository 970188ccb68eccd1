/**
 * Every YAML example of docs/playbook.md, tried as a reader would try it with the built CLI: a whole playbook
 * passes `fleetbook validate` with no diagnostic and `fleetbook run` runs it to `succeeded` on the embedded
 * emulator. A fragment is put in a manual playbook with an `account` input first: top-level members as they are,
 * a list of steps under `steps:`, a step's own members on the step CONTEXT gives it, after the steps CONTEXT says
 * it reads. A new example that needs more than that fails here until CONTEXT says what. (docs/testing.md's
 * examples are test/testing/guide.test.ts's.)
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { yamlBlocks } from '../helpers/markdown.js';
import { tempDir } from '../helpers/temp.js';

const DOC = join(import.meta.dirname, '..', '..', 'docs', 'playbook.md');
const HEADER = `version: 1
name: example
on: { manual: true }
inputs:
  account: { type: string, default: '0000123456-00001' }
`;

const indent = (text: string, by: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => (l ? by + l : l))
    .join('\n');

/** The active devices of the account, by IMEI, and a location report of them: what the fragments read. */
const LOCATED = `- id: devices
  uses: devices.list
  with: { accountName: '\${{ inputs.account }}', currentState: active }
  items: { kind: imei }
- id: report
  uses: location.createReport
  with: { accountName: '\${{ inputs.account }}', deviceList: '\${{ steps.devices.items }}', cacheMode: '0' }
`;

/**
 * What a fragment needs around it, by its first line: `step`, the step its members go on (the last of these
 * steps); `before`, the steps it reads.
 */
const CONTEXT: Record<string, { step?: string; before?: string }> = {
  // The per-device policy of a step: a location report's devices are the ones that fail with 7.3 errors.
  'devices:': { step: LOCATED },
  // The report examples write the located devices of `report` and the messages of an SMS history `sms`.
  '- id: save # one row per device: its location, or its error': {
    before: `${LOCATED}- id: sms\n  uses: sms.history\n  with: { accountName: '\${{ inputs.account }}' }\n`,
  },
};

/** The playbook a reader makes of the example `text`. */
function asPlaybook(text: string): string {
  if (/^version:/m.test(text)) return text;
  if (/^steps:/m.test(text)) return HEADER + text;
  const first = text.split('\n')[0] as string;
  const context = CONTEXT[first] ?? {};
  if (text.startsWith('- ')) return `${HEADER}steps:\n${indent((context.before ?? '') + text, '  ')}\n`;
  expect(context.step, `the example starting \`${first}\`: say in CONTEXT which step it goes on`).to.be.a(
    'string',
  );
  return `${HEADER}steps:\n${indent(context.step as string, '  ')}\n${indent(text, '    ')}\n`;
}

describe('docs/playbook.md: every example validates and runs', function () {
  this.timeout(60_000);
  const markdown = readFileSync(DOC, 'utf8');
  const examples = yamlBlocks(markdown);
  const dir = tempDir('fleetbook-playbook-examples-');

  it('has its examples', () => {
    expect(examples.length).to.be.at.least(7);
    const firsts = examples.map((e) => e.text.split('\n')[0]);
    for (const first of Object.keys(CONTEXT)) expect(firsts, 'a CONTEXT no example needs').to.include(first);
  });

  for (const { line, text } of examples) {
    it(`the example at docs/playbook.md:${line}`, async () => {
      const file = `example-${line}.yaml`;
      await writeFile(join(dir, file), asPlaybook(text));
      const v = await fleetbook(['validate', file], {}, [], dir);
      expect(v.stdout + v.stderr).to.equal('1 playbook checked: 0 errors, 0 warnings\n');
      const r = await fleetbook(['run', file], {}, [], dir, 55_000);
      expect(r.code, r.stdout + r.stderr).to.equal(0);
      expect(r.stdout).to.match(/^run \S+ of \S+: succeeded\n/);
    });
  }

  it('names the item given twice as the Inputs section says', async () => {
    const quoted = /``(input `sensors`: [^\n]*?)``/.exec(markdown)?.[1];
    const item = /item (\d+) "([^"]+)" is given twice/.exec(quoted ?? '');
    expect(item, 'the refusal quoted under Inputs').to.not.equal(null);
    const [, at, sensor] = item as RegExpExecArray;
    const sensors = Array.from({ length: Number(at) + 1 }, (_, i) =>
      i === 0 || i === Number(at) ? sensor : `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`,
    );
    const overview = examples.find((e) => /^version:/m.test(e.text)) as { text: string };
    await writeFile(join(dir, 'overview.yaml'), overview.text);
    const r = await fleetbook(
      ['run', 'overview.yaml', '--input', `sensors=${JSON.stringify(sensors)}`],
      {},
      [],
      dir,
    );
    expect([r.code, r.stderr]).to.deep.equal([2, `fleetbook: ${quoted}\n`]);
  });
});
