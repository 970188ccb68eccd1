/**
 * A step whose removal took effect though its answer was lost succeeds: the repeat that finds the thing gone
 * (usageTriggers.delete's "Trigger not found") is the call's success, and the step's log says so at info. That
 * holds for the client's own retry, for a step's `retry` after an attempt whose outcome is unknown, and for a
 * run resumed after the call was sent. A step that names a trigger that never existed still fails. Before, each
 * such repeat failed the step.
 */
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import type { Emulator } from '../../src/emulator/index.js';
import { runPlaybook } from '../../src/runner/runner.js';
import type { SqliteStore } from '../../src/store/sqlite.js';
import {
  calls,
  captureLogger,
  emulator,
  memoryStore,
  playbook,
  RATES,
  setFaults,
  type Json,
} from './helpers.js';

const ACTION = 'usageTriggers.delete';

const drop = (account: string, triggerId: string, retry = '') => `version: 1
name: drop-trigger
on: { manual: true }
steps:
  - id: drop
    uses: usageTriggers.delete
    with: { accountName: "${account}", triggerId: "${triggerId}" }
${retry}`;

describe('runner: a removal whose answer was lost', function () {
  this.timeout(30_000);
  let emu: Emulator;
  let account: string;
  let store: SqliteStore;
  const clients: Client[] = [];

  /** A client of the emulator making `attempts` attempts of a call. */
  const clientOf = (attempts: number): Client => {
    const c = createClient({
      baseUrl: emu.baseUrl,
      clientId: emu.defaults.clientId,
      clientSecret: emu.defaults.clientSecret,
      username: emu.defaults.username,
      password: emu.defaults.password,
      rates: RATES,
      retry: { maxAttempts: attempts, baseDelayMs: 1, maxDelayMs: 5 },
    });
    clients.push(c);
    return c;
  };

  const trigger = async (): Promise<string> => {
    const made = await clientOf(1).usageTriggers.create({
      accountName: account,
      serviceName: 'Location',
      triggerName: 'dropped',
      thresholdValue: '50',
      allowExcess: true,
      sendSmsNotification: false,
      sendEmailNotification: true,
      emailAddresses: 'ops@example.com',
    });
    return made.triggerId;
  };

  const sent = async () => (await calls(emu)).actions[ACTION] ?? 0;

  before(async () => {
    emu = await emulator({ devicesPerAccount: 10 });
    account = emu.defaults.accounts[0]!;
  });
  beforeEach(() => {
    store = memoryStore();
  });
  afterEach(async () => {
    await setFaults(emu, {});
    await store.close();
    for (const c of clients.splice(0)) await c.close();
  });
  after(() => emu.close());

  const gone = (lines: { level: string; message: string; meta: Json }[]) =>
    lines.filter((l) => l.level === 'info' && /already gone/.test(l.message)).map((l) => l.meta);

  it("succeeds when the client's retry finds the trigger gone, and says so in the step's log", async () => {
    const id = await trigger();
    await setFaults(emu, { resetNext: { [ACTION]: 1 } });
    const before = await sent();
    const logger = captureLogger();
    const s = await runPlaybook(playbook(drop(account, id)), { client: clientOf(5), store, logger });
    expect(s.status, s.error).to.equal('succeeded');
    expect((await sent()) - before).to.equal(2);
    expect(gone(logger.lines)).to.have.length(1);
    expect(gone(logger.lines)[0]).to.include({ step: 'drop', action: ACTION });
    expect(String(gone(logger.lines)[0]!.error)).to.match(/^Trigger not found/);
  });

  it("succeeds when the step's retry finds the trigger gone after an attempt whose outcome is unknown", async () => {
    const id = await trigger();
    await setFaults(emu, { resetNext: { [ACTION]: 1 } });
    const logger = captureLogger();
    const retry = '    retry: { on: [network], maxAttempts: 2, delay: 10ms }';
    const s = await runPlaybook(playbook(drop(account, id, retry)), { client: clientOf(1), store, logger });
    expect(s.status, s.error).to.equal('succeeded');
    expect(gone(logger.lines).map((m) => m.step)).to.deep.equal(['drop']);
  });

  it('succeeds when a run resumed after the call was sent finds the trigger gone', async () => {
    const id = await trigger();
    await clientOf(1).usageTriggers.delete({ accountName: account, triggerId: id });
    store.createRun({
      id: 'resumed',
      playbook: 'drop-trigger',
      status: 'running',
      trigger: { type: 'manual' },
      inputs: {},
      startedAt: new Date().toISOString(),
    });
    store.saveStep('resumed', 'drop', { status: 'sending' });
    const logger = captureLogger();
    const s = await runPlaybook(playbook(drop(account, id)), {
      client: clientOf(5),
      store,
      logger,
      runId: 'resumed',
    });
    expect(s.status, s.error).to.equal('succeeded');
    expect(gone(logger.lines).map((m) => m.step)).to.deep.equal(['drop']);
  });

  it('fails a step that names a trigger that does not exist', async () => {
    const logger = captureLogger();
    const missing = '11111111-2222-4333-8444-555555555555';
    const s = await runPlaybook(playbook(drop(account, missing)), { client: clientOf(5), store, logger });
    expect(s.status).to.equal('failed');
    expect(s.error).to.match(/Trigger not found/);
    expect(gone(logger.lines)).to.deep.equal([]);
  });
});
