/**
 * A playbook path that cannot be read is said the same way by `validate`, `fmt` and `serve --playbooks`, with
 * its cause (child processes; dist/ must be built). validate and fmt said "no such file or directory" whatever
 * the cause, and serve "no such playbook file or directory": a path through a file was reported missing.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('a playbook path that cannot be read (child process)', function () {
  this.timeout(30_000);
  let dir: string;
  before(async () => {
    dir = tempDir('fb-unreadable-path-');
    await writeFile(join(dir, 'a.yaml'), 'version: 1\n');
  });

  const cases = [
    { path: 'missing', why: 'no such file or directory' },
    // A file taken for a directory: it exists, and is not missing.
    { path: join('a.yaml', 'b.yaml'), why: 'a part of the path is not a directory' },
  ];

  for (const { path, why } of cases) {
    it(`validate and fmt: ${why}, exit 2`, async () => {
      for (const args of [
        ['validate', path],
        ['fmt', '--check', path],
        ['validate', 'a.yaml', path],
      ]) {
        const r = await fleetbook(args, {}, [], dir);
        expect([r.code, r.stdout, r.stderr], args.join(' ')).to.deep.equal([
          2,
          '',
          `fleetbook: ${path}: ${why}\n`,
        ]);
      }
    });

    it(`serve --playbooks: ${why}; not starting, exit 2`, async () => {
      const state = join(dir, 'state.db');
      const r = await fleetbook(
        ['serve', '--playbooks', path, '--listen', '127.0.0.1:0', '--state', state],
        {},
        [],
        dir,
        // A daemon that starts does not exit: it is stopped here, and the test fails.
        10_000,
      );
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr).to.include(`${path}: ${why}; not starting`);
      expect(existsSync(state), 'no store opened').to.equal(false);
    });
  }
});
