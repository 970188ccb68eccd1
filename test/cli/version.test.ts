/** `fleetbook --version` prints the package's version (child process: dist/ must be built). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';

const { version } = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'),
) as { version: string };

describe('fleetbook --version', () => {
  for (const flag of ['--version', '-V']) {
    it(`${flag} prints the version of package.json and exits 0`, async () => {
      const r = await fleetbook([flag], {});
      expect(r.stderr).to.equal('');
      expect(r.code).to.equal(0);
      expect(r.stdout).to.equal(`${version}\n`);
    });
  }
});
