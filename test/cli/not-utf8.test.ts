/**
 * A playbook (or a playbook test) whose bytes are not UTF-8 was read with U+FFFD in place of each bad byte
 * and run with the mangled text: YAML is Unicode. Every command that reads one refuses it the same way, at
 * the first such byte. The built binary, as a user runs it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const LATIN1 = Buffer.concat([
  Buffer.from('version: 1\nname: latin1\non: { manual: true }\nsteps:\n  - id: say\n    uses: log\n'),
  Buffer.from('    with: { message: "caf\xe9 \xff\xfe" }\n', 'latin1'),
]);
const SAYS = 'the file is not UTF-8: byte 0xE9 is not part of a UTF-8 character';

describe('a playbook that is not UTF-8', () => {
  let dir: string;
  let playbook: string;

  before(async () => {
    dir = tempDir('fleetbook-not-utf8-');
    await mkdir(join(dir, 'playbooks'));
    playbook = join(dir, 'playbooks', 'latin1.yaml');
    await writeFile(playbook, LATIN1);
  });

  it('is refused by validate, serve, run, test and fmt, at its first byte that is not UTF-8', async function () {
    this.timeout(60_000);
    const at = `${playbook}:7:26: ${SAYS}`;
    const state = { FLEETBOOK_STATE: join(dir, 'state.db') };

    const validate = await fleetbook(['validate', playbook], {});
    expect([validate.code, validate.stdout.split('\n')[0]]).to.deep.equal([
      1,
      `${at} (YAML is Unicode: save the file as UTF-8) [yaml]`,
    ]);

    const serve = await fleetbook(
      ['serve', '--playbooks', join(dir, 'playbooks'), '--listen', '127.0.0.1:0'],
      state,
    );
    expect(serve.code, serve.stderr).to.equal(2);
    expect(serve.stderr).to.include(`not starting:\n${at}`);

    const run = await fleetbook(['run', playbook], state);
    expect(run.code, run.stderr).to.equal(2);
    expect(run.stderr.split('\n')[0]).to.match(new RegExp(`^${escape(at)}.*\\[yaml\\]$`));

    const test = join(dir, 'playbooks', 'latin1.test.yaml');
    await writeFile(test, 'cases:\n  - name: says\n    expect: { status: succeeded }\n');
    const tested = await fleetbook(['test', test], state);
    expect(tested.code, tested.stdout).to.equal(1);
    expect(tested.stdout).to.include(`    ${at}`);

    const fmt = await fleetbook(['fmt', '--check', playbook], {});
    expect(fmt.code).to.equal(1);
    expect(fmt.stderr.split('\n')[0]).to.match(new RegExp(`^${escape(at)}`));
  });

  it('a playbook test that is not UTF-8 is refused the same way', async () => {
    const test = join(dir, 'latin1-only.test.yaml');
    await writeFile(
      test,
      Buffer.concat([Buffer.from('cases:\n  - name: '), Buffer.from([0x63, 0xe9, 0x0a])]),
    );
    const r = await fleetbook(['test', test], {});
    expect(r.code).to.equal(1);
    expect(r.stdout).to.include(`${test}:2:12: the file is not UTF-8: byte 0xE9`);
  });

  it('a UTF-8 byte order mark is fine, as are characters of every length', async () => {
    const file = join(dir, 'bom.yaml');
    await writeFile(
      file,
      '\ufeffversion: 1\nname: bom\non: { manual: true }\nsteps:\n  - id: say\n    uses: log\n    with: { message: "café ☕ 𝄞" }\n',
    );
    const r = await fleetbook(['validate', file], {});
    expect([r.code, r.stdout]).to.deep.equal([0, '']);
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
