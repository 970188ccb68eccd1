/**
 * `fleetbook fmt`: quotes the expressions only fleetbook reads as YAML, and changes no other character of the
 * file; `--check` changes nothing and exits 1 when a file would change. `npm test` builds dist/ first.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { formatPlaybook } from '../../src/cli/fmt.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import { fleetbook } from '../helpers/cli.js';

/** A playbook in fleetbook's lenient style, full of comments, blank lines and odd spacing. */
const LENIENT = `# yaml-language-server: $schema=../schemas/playbook.schema.json
#   A header comment, { with braces } and \${{ an expression }} in it.

version: 1   # the version
name: lenient
on: { manual: true } # manual only

inputs:
  account: { type: string, default: "0000123456-00001" }   # the account


steps:
  # the listing
  - id: list
    uses: devices.list
    with: { accountName: \${{ inputs.account }}, currentState: active } # trailing
  - id: say
    uses: log
    with:
      message: already \${{ inputs.account }} fine   # a plain block scalar, YAML to every tool
      fields: { n: \${{ size(steps.list.items) }}, quoted: "\${{ inputs.account }}", s: \${{ "a, b" }} }
  - id: both
    uses: log
    with: { message: \${{ inputs.account == "x" ? "yes: x" : 'no' }} }
  - id: colon
    uses: log
    with:
      message: \${{ inputs.account == "x" ? "y" : "n" }}
    # the end
`;

const QUOTED = `# yaml-language-server: $schema=../schemas/playbook.schema.json
#   A header comment, { with braces } and \${{ an expression }} in it.

version: 1   # the version
name: lenient
on: { manual: true } # manual only

inputs:
  account: { type: string, default: "0000123456-00001" }   # the account


steps:
  # the listing
  - id: list
    uses: devices.list
    with: { accountName: "\${{ inputs.account }}", currentState: active } # trailing
  - id: say
    uses: log
    with:
      message: already \${{ inputs.account }} fine   # a plain block scalar, YAML to every tool
      fields: { n: "\${{ size(steps.list.items) }}", quoted: "\${{ inputs.account }}", s: '\${{ "a, b" }}' }
  - id: both
    uses: log
    with: { message: '\${{ inputs.account == "x" ? "yes: x" : ''no'' }}' }
  - id: colon
    uses: log
    with:
      message: '\${{ inputs.account == "x" ? "y" : "n" }}'
    # the end
`;

describe('fleetbook fmt', function () {
  this.timeout(60_000);

  it('quotes each expression only fleetbook reads, and changes no other character', () => {
    const r = formatPlaybook(LENIENT);
    expect(r).to.deep.equal({ text: QUOTED, changed: true });
  });

  it('gives YAML that the yaml package alone reads as fleetbook read the original', () => {
    const before = loadPlaybook(LENIENT, 'lenient.yaml');
    expect(before.playbook, JSON.stringify(before.diagnostics)).to.not.equal(undefined);
    const strict = parseDocument(QUOTED, { uniqueKeys: true });
    expect(strict.errors).to.deep.equal([]);
    expect(strict.toJS()).to.deep.equal(before.playbook);
    expect(loadPlaybook(QUOTED, 'quoted.yaml').diagnostics).to.deep.equal([]);
  });

  it('leaves a formatted file as it is', () => {
    expect(formatPlaybook(QUOTED)).to.deep.equal({ text: QUOTED, changed: false });
  });

  it('refuses a file that is not YAML even to fleetbook, with its line and column', () => {
    expect(formatPlaybook('version: 1\nsteps: [\n')).to.include({ line: 3 });
  });

  it('--check exits 1 and changes nothing; without it the files are fixed in place', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetbook-fmt-'));
    try {
      const file = join(dir, 'lenient.yaml');
      writeFileSync(file, LENIENT);
      writeFileSync(join(dir, 'quoted.yml'), QUOTED);
      const check = await fleetbook(['fmt', '--check', dir], {});
      expect(check.code, check.stderr).to.equal(1);
      expect(check.stdout).to.equal(`${file}\n`);
      expect(check.stderr).to.include('2 files checked: 1 would be reformatted');
      expect(readFileSync(file, 'utf8')).to.equal(LENIENT);
      const fix = await fleetbook(['fmt', dir], {});
      expect(fix.code, fix.stderr).to.equal(0);
      expect(readFileSync(file, 'utf8')).to.equal(QUOTED);
      expect((await fleetbook(['fmt', '--check', file], {})).code).to.equal(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
