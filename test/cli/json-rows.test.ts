import { expect } from 'chai';
import { writeJsonWithRows } from '../../src/cli/runs.js';

/** Rows in pages of two: a page's last row and the next page's first are joined as any two rows are. */
async function* pagesOf(rows: unknown[]): AsyncGenerator<unknown[]> {
  for (let i = 0; i < rows.length; i += 2) yield rows.slice(i, i + 2);
}

/** What writeJsonWithRows writes, in one string. */
async function written(head: object, rows: unknown[]): Promise<string> {
  let out = '';
  await writeJsonWithRows(
    (s) => {
      out += s;
      return undefined;
    },
    head,
    'deviceResults',
    pagesOf(rows),
  );
  return out;
}

describe('writeJsonWithRows', () => {
  const cases: [string, object, unknown[]][] = [
    [
      'members and rows',
      { runId: 'r', steps: [{ id: 'a', n: 1 }], nested: { x: [1, 2] } },
      [{ a: 1 }, { b: 'x\ny' }],
    ],
    ['no members, no rows', {}, []],
    ['members, no rows', { status: 'succeeded' }, []],
    ['no members, rows of every kind', {}, [1, 'two', null, [3, { four: 4 }], { five: {} }]],
  ];
  for (const [name, head, rows] of cases) {
    it(`writes what JSON.stringify(value, null, 2) writes: ${name}`, async () => {
      expect(await written(head, rows)).to.equal(
        `${JSON.stringify({ ...head, deviceResults: rows }, null, 2)}\n`,
      );
    });
  }

  it('writes each page before it takes the next, and waits when the writer asks it to', async () => {
    const events: string[] = [];
    async function* rows() {
      for (let i = 0; i < 3; i++) {
        events.push(`take ${i}`);
        yield [{ i }];
      }
    }
    // The writer asks to wait after each row; the next row must not be taken before the wait is over.
    await writeJsonWithRows(
      (s) => {
        if (!s.includes('"i"')) return undefined;
        const i = (JSON.parse(s.replace(/^,/, '')) as { i: number }).i;
        events.push(`write ${i}`);
        return new Promise((resolve) =>
          setTimeout(() => {
            events.push(`drained ${i}`);
            resolve();
          }, 1),
        );
      },
      { a: 1 },
      'deviceResults',
      rows(),
    );
    expect(events).to.deep.equal([
      'take 0',
      'write 0',
      'drained 0',
      'take 1',
      'write 1',
      'drained 1',
      'take 2',
      'write 2',
      'drained 2',
    ]);
  });
});
