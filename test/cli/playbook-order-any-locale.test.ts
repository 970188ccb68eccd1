/**
 * `fleetbook validate DIR` lists a directory's playbooks in one order on every machine (child process; dist/
 * must be built). The order came from the locale of the process (LANG): on a Danish machine `aa.yaml` came after
 * `z.yaml`, on a Lithuanian one `y.yaml` before `j.yaml`, on an Estonian one `z.yaml` before `y.yaml`, on a
 * Turkish one `Iz.yaml` before `ia.yaml`, so the same directory was reported in another order than on CI.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** The names, in the order they are listed: English collation. */
const NAMES = ['aa', 'b', 'ia', 'Iz', 'j', 'y', 'z'];
const LOCALES = ['en_US.UTF-8', 'C', 'da_DK.UTF-8', 'lt_LT.UTF-8', 'et_EE.UTF-8', 'tr_TR.UTF-8'];

describe('fleetbook validate: the order of a directory’s playbooks under any locale (child process)', function () {
  this.timeout(60_000);
  let dir: string;

  before(async () => {
    dir = tempDir('fb-order-');
    // Written in another order than listed, each with one error, so that each file has a line.
    for (const name of [...NAMES].reverse())
      await writeFile(join(dir, `${name}.yaml`), `version: 1\nname: ${name.toLowerCase()}\n`);
  });

  for (const locale of LOCALES)
    it(`LANG=${locale}`, async () => {
      const r = await fleetbook(['validate', dir], { LANG: locale, LC_ALL: locale });
      const files = [...`${r.stdout}${r.stderr}`.matchAll(/\/(\w+)\.yaml:\d+:\d+:/g)].map((m) => m[1]);
      expect(r.code, r.stderr).to.equal(1);
      expect([...new Set(files)]).to.deep.equal(NAMES);
    });
});
