/**
 * A filter or concurrency key that fails on an event is never silent (issue: a callback acknowledged, marked
 * processed, starting no run, and nothing logged). A real daemon process, its JSON log and its /metrics.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { emulatorEnv } from '../helpers/cli.js';
import { DaemonProcess } from '../helpers/daemon.js';
import { emulator } from '../runner/helpers.js';
import { tempDir } from '../helpers/temp.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'expression-errors');
const USER = 'expr-listener';
const PASSWORD = 'expr-listener-password';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('daemon: a filter or concurrency key that fails on an event is never silent', function () {
  this.timeout(60_000);
  let emu: Emulator;
  let dir: string;
  let daemon: DaemonProcess;

  before(async () => {
    emu = await emulator();
    dir = tempDir('fleetbook-expression-errors-');
    daemon = await DaemonProcess.start('daemon', {
      playbooks: FIXTURES,
      state: join(dir, 'state.db'),
      env: {
        ...emulatorEnv(emu),
        FLEETBOOK_CALLBACK_USERNAME: USER,
        FLEETBOOK_CALLBACK_PASSWORD: PASSWORD,
        FLEETBOOK_LOG_LEVEL: 'info',
      },
    });
  });

  after(async () => {
    await daemon?.kill();
    await emu?.close();
  });

  async function post(requestId: string, deviceResponse: unknown): Promise<void> {
    const res = await fetch(`${daemon.url}/callbacks/DeviceUsage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: USER, password: PASSWORD, requestId, deviceResponse }),
    });
    expect(res.status).to.equal(200);
  }

  async function metric(playbook: string, expression: string): Promise<number> {
    const text = await (await fetch(`${daemon.url}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) =>
        l.startsWith(
          `fleetbook_event_expression_errors_total{playbook="${playbook}",expression="${expression}"}`,
        ),
      );
    return line ? Number(line.split(' ').pop()) : 0;
  }

  async function until<T>(what: string, read: () => T | undefined): Promise<T> {
    for (let i = 0; i < 200; i++) {
      const v = read();
      if (v !== undefined) return v;
      await sleep(50);
    }
    throw new Error(`timed out waiting for ${what}:\n${daemon.stderr.slice(-3000)}`);
  }

  it('a filter that cannot read the event logs a warning naming the event, playbook and expression, and counts', async () => {
    // A DeviceUsage message without alertServiceResponse: the filter's member path does not exist.
    await post('no-alert-1', { usageResponse: { accountName: '0000123456-00001' } });
    const warning = await until('the warning', () =>
      daemon
        .logs()
        .find((l) => l.message === 'callback filter failed on an event; it starts no run of this playbook'),
    );
    expect(warning).to.include({
      level: 'warn',
      playbook: 'filtered',
      requestId: 'no-alert-1',
      service: 'DeviceUsage',
    });
    expect(warning.expression).to.equal(
      '${{ event.deviceResponse.alertServiceResponse.triggerName.startsWith("overuse") }}',
    );
    expect(warning.eventId).to.be.a('number');
    expect(String(warning.error)).to.match(/alertServiceResponse/);
    expect(await metric('filtered', 'filter')).to.equal(1);
  });

  it('a concurrency key that cannot be computed fails the run, with a warning and a count', async () => {
    await post('no-alert-2', { usageResponse: {} });
    const warning = await until('the warning', () =>
      daemon.logs().find((l) => l.message === 'concurrency.key failed on the run; the run fails'),
    );
    expect(warning).to.include({ level: 'warn', playbook: 'keyed' });
    expect(warning.expression).to.equal('${{ event.deviceResponse.alertServiceResponse.accountName }}');
    expect(await metric('keyed', 'concurrency.key')).to.be.greaterThan(0);
    const runs = (await (await fetch(`${daemon.url}/runs?playbook=keyed`)).json()) as {
      status: string;
      error?: string;
    }[];
    expect(runs.some((r) => r.status === 'failed' && /^concurrency\.key: /.test(r.error ?? ''))).to.equal(
      true,
    );
  });

  it('an event the filter selects starts its run', async () => {
    await post('overuse-1', {
      alertServiceResponse: { triggerName: 'overuse-1', accountName: '0000123456-00001' },
    });
    await until('the run', () =>
      daemon.logs().find((l) => l.message === 'run started' && l.playbook === 'filtered') ? true : undefined,
    );
  });
});
