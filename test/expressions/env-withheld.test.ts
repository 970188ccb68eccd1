/**
 * A variable of `env` that fleetbook withholds, read at run time (`env[inputs.name]`), fails with its own error
 * (FB_ENV_WITHHELD), not by the text of cel-js's `No such key`: that text, for any other key named like a
 * secret in an expression that also read `env[...]`, was reported as a withheld variable.
 */
import { expect } from 'chai';
import { EnvWithheldError } from '../../src/errors.js';
import { compile } from '../../src/expressions/cel.js';

const context = (name: string) => ({ env: { HOME: '/home/fleet' }, inputs: { name, opts: {} } });

function thrown(source: string, name: string): unknown {
  try {
    compile(source).evaluate(context(name));
  } catch (e) {
    return e;
  }
  throw new Error(`${source} did not fail`);
}

describe('env: the variables fleetbook withholds', () => {
  it('reading one, or asking for it, fails with FB_ENV_WITHHELD naming it', () => {
    for (const source of ['env[inputs.name]', 'inputs.name in env', 'env.DB_PASSWORD']) {
      const e = thrown(source, 'DB_PASSWORD');
      expect(e, source).to.be.instanceOf(EnvWithheldError);
      expect(e, source).to.include({ code: 'FB_ENV_WITHHELD', variable: 'DB_PASSWORD' });
    }
    expect(compile('env[inputs.name]').evaluate(context('HOME'))).to.equal('/home/fleet');
    expect(compile('inputs.name in env').evaluate(context('EDITOR'))).to.equal(false);
  });

  it('another missing key named like a secret, beside env[...], is missing, not withheld', () => {
    const e = thrown('env[inputs.name] + inputs.opts.API_KEY', 'HOME');
    expect(e).not.to.be.instanceOf(EnvWithheldError);
    expect((e as Error).message).to.match(/^No such key: API_KEY\n/);
  });
});
