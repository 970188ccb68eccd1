/**
 * The console's runs table says what started a run as `fleetbook runs list` does: a backfill or a missed fire with
 * the fire it was for, a callback's run with its service. It showed only the trigger's type, so that a backfill
 * read as an on-time scheduled run. Runs stored in the daemon's SQLite state as the scheduler, `fleetbook run
 * --scheduled-at` and the matcher store them; a real `fleetbook serve` and a headless Chromium
 * (test/helpers/console-suite.ts) on its runs list, as loaded and as streamed, beside `fleetbook runs list`.
 */
import { expect } from 'chai';
import type { RunRecord } from '../../src/store/store.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { checkAccessibility, screenshot, until } from '../helpers/browser.js';
import { fleetbook } from '../helpers/cli.js';
import { column, columns, consoleSuite, factOf, tableCaptioned } from '../helpers/console-suite.js';
import { FIXTURES } from '../helpers/console-operator.js';

const TOKEN = 'run-triggers-console-token-0123';
const PLAYBOOK = 'triggered';

const schedule = (scheduledAt: string, reason: string) => ({
  type: 'schedule',
  schedule: '0 7 * * *',
  cron: '0 7 * * *',
  scheduledAt,
  reason,
});

/** Each run stored, by the last block of its id, and the trigger text `runs list` gives it. */
const RUNS: [string, Record<string, unknown>, string][] = [
  ['1', schedule('2026-01-02T07:00:00.000Z', 'backfill'), 'schedule, backfill for 2026-01-02T07:00:00Z'],
  ['2', schedule('2026-01-03T07:00:00.000Z', 'missed'), 'schedule, missed for 2026-01-03T07:00:00Z'],
  ['3', schedule('2026-01-04T07:00:00.000Z', 'schedule'), 'schedule'],
  [
    '4',
    { type: 'callback', service: 'DeviceUsage', kind: 'usage', requestId: 'r-4', inboxId: 4 },
    'callback DeviceUsage',
  ],
  ['5', { type: 'manual' }, 'manual'],
];

const runId = (n: string) => `7219c0de-0000-4000-8000-${n.padStart(12, '0')}`;

function run(n: string, trigger: Record<string, unknown>, startedAt: string): RunRecord {
  return {
    id: runId(n),
    playbook: PLAYBOOK,
    status: 'succeeded',
    trigger,
    inputs: {},
    startedAt,
    endedAt: new Date(Date.parse(startedAt) + 1000).toISOString(),
  };
}

describe('console: what started a run, in the runs table', function () {
  this.timeout(120_000);
  const t = consoleSuite({ name: 'run-triggers', playbooks: FIXTURES, token: TOKEN });

  it('says a backfill, a missed fire and a callback run in full, as `runs list` does', async () => {
    const store = new SqliteStore(t.state);
    RUNS.forEach(([n, trigger], i) => store.createRun(run(n, trigger, `2026-01-05T0${i}:00:00.000Z`)));
    await store.close();

    const { p, close } = await t.signedIn();
    try {
      const table = tableCaptioned(p, 'Runs');
      const triggers = async (ids: string[], seen: (s: string) => void) => {
        const col = column(await columns(table), 'Trigger');
        // Read at once: the rows of the filters before go as those of the new ones come.
        const shown = Object.fromEntries(
          await table
            .locator(':scope > tbody > tr[data-run-id]')
            .evaluateAll(
              (trs, c) =>
                trs.map((tr) => [
                  tr.getAttribute('data-run-id'),
                  (tr.children[c] as unknown as { innerText: string }).innerText.trim(),
                ]),
              col,
            ),
        ) as Record<string, string>;
        seen(JSON.stringify(shown));
        return JSON.stringify(Object.keys(shown).sort()) === JSON.stringify([...ids].sort())
          ? shown
          : undefined;
      };
      const expected = (which: typeof RUNS) =>
        Object.fromEntries(which.map(([n, , text]) => [runId(n), text]));

      await p.goto(`${t.daemon.url}/#/runs?playbook=${PLAYBOOK}`);
      const listed = await until('the stored runs listed', (seen) =>
        triggers(
          RUNS.map(([n]) => runId(n)),
          seen,
        ),
      );
      expect(listed, 'the Trigger column').to.deep.equal(expected(RUNS));
      // Word for word what `fleetbook runs list` prints in its TRIGGER column, from the same state.
      const cli = await fleetbook(['runs', 'list', '--playbook', PLAYBOOK], { FLEETBOOK_STATE: t.state });
      expect(cli.code, cli.stderr).to.equal(0);
      const [header, ...lines] = cli.stdout.trimEnd().split('\n');
      const [from, to] = [header!.indexOf('TRIGGER'), header!.indexOf('PLAYBOOK')];
      const printed = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(' ')), l.slice(from, to).trim()]),
      );
      expect(listed, `the Trigger column beside \`runs list\`:\n${cli.stdout}`).to.deep.equal(printed);
      console.log(`    screenshot: ${await screenshot(p, '22-run-triggers')}`);
      await checkAccessibility(p, 'the runs list with the trigger of each run in full');

      // The trigger filter is by type still: a backfill and a missed fire are runs of a schedule.
      await p.goto(`${t.daemon.url}/#/runs?playbook=${PLAYBOOK}&trigger=schedule`);
      const scheduled = RUNS.filter(([, trigger]) => trigger.type === 'schedule');
      const filtered = await until('the scheduled runs listed', (seen) =>
        triggers(
          scheduled.map(([n]) => runId(n)),
          seen,
        ),
      );
      expect(filtered, 'the Trigger column under trigger=schedule').to.deep.equal(expected(scheduled));

      // A run streamed in while the list is open says its trigger the same way.
      await p.goto(`${t.daemon.url}/#/runs?playbook=${PLAYBOOK}`);
      await until('the stored runs listed again', (seen) =>
        triggers(
          RUNS.map(([n]) => runId(n)),
          seen,
        ),
      );
      const later = new SqliteStore(t.state);
      const streamed = run('6', schedule('2026-01-01T07:00:00.000Z', 'backfill'), new Date().toISOString());
      later.createRun(streamed);
      await later.close();
      const live = await until('the streamed run listed', (seen) =>
        triggers([...RUNS.map(([n]) => runId(n)), streamed.id], seen),
      );
      expect(live[streamed.id], 'the Trigger of the streamed run').to.equal(
        'schedule, backfill for 2026-01-01T07:00:00Z',
      );
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });

  it("says it on each run's page as the runs table does, not the trigger's raw members", async () => {
    // The runs of the test before, stored in the same state.
    const { p, close } = await t.signedIn();
    try {
      const shown: Record<string, string> = {};
      for (const [n] of RUNS) {
        await p.goto(`${t.daemon.url}/#/runs/${runId(n)}`);
        shown[runId(n)] = await until(`the page of run ${n}`, async (seen) => {
          const text = await factOf(p, 'Trigger');
          seen(text);
          return text.startsWith('(no ') ? undefined : text;
        });
      }
      expect(shown, 'the Trigger fact of each run').to.deep.equal(
        Object.fromEntries(RUNS.map(([n, , text]) => [runId(n), text])),
      );
      console.log(`    screenshot: ${await screenshot(p, '22-run-trigger-page')}`);
      expect(t.pageErrors, 'uncaught errors in the page').to.deep.equal([]);
    } finally {
      await close();
    }
  });
});
