/**
 * A dry run makes no call that acts (product.md section 2: "makes none of the mutating calls"). It used to post
 * its webhooks and write its reports: a dry run of the nightly report overwrote the real one with planned
 * outcomes, and paged the on-call channel.
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect } from 'chai';
import { engineSettings } from '../../src/actions/settings.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import { clientFor, emulator, memoryStore, playbook } from './helpers.js';
import { tempDir } from '../helpers/temp.js';

describe('runner: a dry run posts no webhook and writes no report', () => {
  let emu: Emulator;
  let dir: string;

  before(async () => {
    emu = await emulator();
    dir = tempDir('fleetbook-dry-run-acts-outside-');
  });

  after(async () => {
    await emu.close();
  });

  it('plans notify.webhook and report.write, and runs log', async () => {
    const posted: string[] = [];
    const server = createServer((req, res) => {
      posted.push(req.url ?? '');
      res.writeHead(200).end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const store = memoryStore();
    const client = clientFor(emu);
    try {
      const summary = await runPlaybook(
        playbook(`
version: 1
name: dry
on: { manual: true }
steps:
  - id: suspend
    uses: devices.suspend
    with: { accountName: "${emu.defaults.accounts[0]}", devices: [{ id: "353000000000006", kind: imei }] }
  - id: save
    uses: report.write
    with: { path: out.csv, step: suspend }
  - id: tell
    uses: notify.webhook
    with: { url: "${url}", body: { text: done } }
  - id: note
    uses: log
    with: { message: dry run done }
`),
        {
          client,
          store,
          dryRun: true,
          engine: engineSettings({ reportsDir: dir, webhookAllow: ['127.0.0.1'] }),
        },
      );
      expect(summary.status).to.equal('succeeded');
      expect(posted, 'webhooks posted by a dry run').to.deep.equal([]);
      expect(existsSync(join(dir, 'out.csv')), 'a report written by a dry run').to.equal(false);
      expect(summary.planned).to.deep.equal([
        { step: 'suspend', action: 'devices.suspend', calls: 1, devices: 1 },
        { step: 'save', action: 'report.write', calls: 1, devices: 0 },
        { step: 'tell', action: 'notify.webhook', calls: 1, devices: 0 },
      ]);
      expect(summary.steps.map((s) => [s.id, s.status])).to.deep.equal([
        ['suspend', 'planned'],
        ['save', 'planned'],
        ['tell', 'planned'],
        ['note', 'succeeded'],
      ]);
    } finally {
      await client.close();
      await store.close();
      server.close();
    }
  });
});
