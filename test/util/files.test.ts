/** makeDirs: `mkdir -p` that fails where Node's recursive mkdir would never return (below /proc). */
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { makeDirs } from '../../src/util/files.js';

describe('util: makeDirs', () => {
  const root = mkdtempSync(join(tmpdir(), 'fleetbook-dirs-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('makes every missing level, and is content when they exist', () => {
    const deep = join(root, 'a', 'b', 'c');
    makeDirs(deep);
    expect(statSync(deep).isDirectory()).to.equal(true);
    makeDirs(deep);
    makeDirs(root);
    expect(statSync(deep).isDirectory()).to.equal(true);
  });

  it('refuses a path through a file', () => {
    const file = join(root, 'plain');
    writeFileSync(file, 'x');
    expect(() => makeDirs(file)).to.throw(/EEXIST/);
    expect(() => makeDirs(join(file, 'below'))).to.throw(/ENOTDIR/);
  });

  it('fails with ENOENT for a missing directory below /proc, where mkdir -p in Node never returns', () => {
    expect(existsSync('/proc/self'), 'a Linux /proc').to.equal(true);
    expect(() => makeDirs(`/proc/fleetbook-missing-${process.pid}/reports`)).to.throw(/ENOENT/);
  });
});
