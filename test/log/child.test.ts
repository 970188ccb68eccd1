import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { createLogger } from '../../src/log.js';

/** The JSON lines a logger at `level` wrote. */
function capture(level: string) {
  const stream = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  stream.on('data', (b: Buffer) => {
    for (const l of b.toString('utf8').split('\n'))
      if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
  });
  return { log: createLogger({ level, format: 'json', stream }), lines };
}

const flushed = () => new Promise((r) => setImmediate(r));

describe('log: child loggers', () => {
  it('carry their meta on every line, a child of a child both, the later meta winning', async () => {
    const { log, lines } = capture('info');
    const run = log.child({ runId: 'r1', playbook: 'p' });
    run.info('started', { step: 'a' });
    run.child({ step: 'b', playbook: 'q' }).warn('slow');
    log.info('plain');
    await flushed();
    expect(lines.map((l) => [l.message, l.runId, l.playbook, l.step])).to.deep.equal([
      ['started', 'r1', 'p', 'a'],
      ['slow', 'r1', 'q', 'b'],
      ['plain', undefined, undefined, undefined],
    ]);
  });

  it('drop lines below the level, and still write errors and warnings with their meta', async () => {
    const { log, lines } = capture('warn');
    const run = log.child({ runId: 'r2' });
    run.debug('no');
    run.info('no');
    run.warn('yes', { n: 1 });
    run.error('also');
    await flushed();
    expect(lines.map((l) => [l.level, l.message, l.runId])).to.deep.equal([
      ['warn', 'yes', 'r2'],
      ['error', 'also', 'r2'],
    ]);
  });

  it('refuse a level they do not know, rather than drop every line, errors included', () => {
    expect(() => createLogger({ level: 'verbose', stream: new PassThrough() })).to.throw(
      'the log level must be one of error, warn, info, debug, got "verbose"',
    );
  });
});
