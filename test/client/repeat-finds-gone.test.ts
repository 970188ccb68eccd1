/**
 * `usageTriggers.delete`, `locationCallbacks.deregister` and `location.cancelReport` are retry-safe: the client
 * sends them again when an attempt may have reached the service and its answer did not come (a reset once the
 * request was sent, a 5xx). That attempt may have removed the thing, and the repeat is then answered "not
 * found": the call succeeds, with the answer the operation gives, and says so at info (docs/spec-decisions.md).
 * A "not found" to a first attempt, or to a repeat of an attempt that proved the service did nothing (503), is
 * still the error it is: the user named something that does not exist. Before, every repeat failed the call.
 */
import { expect } from 'chai';
import { createClient, type Client } from '../../src/api/client.js';
import { ApiError } from '../../src/errors.js';
import type { Emulator } from '../../src/emulator/index.js';
import { Recorder } from '../helpers/recorder.js';
import { calls, captureLogger, emulator, RATES, setFaults, type Json } from '../runner/helpers.js';

const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5 };

/** The error a call failed with, or undefined when it succeeded. */
async function failure(p: Promise<unknown>): Promise<ApiError | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
}

describe('client: a repeat that finds what the call removes gone', function () {
  this.timeout(30_000);

  describe('against the emulator, its answer lost once the request was processed', () => {
    let emu: Emulator;
    let client: Client;
    let account: string;
    const logger = captureLogger();

    before(async () => {
      emu = await emulator({ devicesPerAccount: 20 });
      account = emu.defaults.accounts[0]!;
      client = createClient({
        baseUrl: emu.baseUrl,
        clientId: emu.defaults.clientId,
        clientSecret: emu.defaults.clientSecret,
        username: emu.defaults.username,
        password: emu.defaults.password,
        rates: RATES,
        retry: FAST_RETRY,
        logger,
      });
    });
    after(async () => {
      await client.close();
      await emu.close();
    });
    afterEach(() => setFaults(emu, {}));

    const sentTwice = async (action: string, run: () => Promise<unknown>): Promise<unknown> => {
      const before = (await calls(emu)).actions[action] ?? 0;
      await setFaults(emu, { resetNext: { [action]: 1 } });
      logger.lines.length = 0;
      const out = await run();
      expect((await calls(emu)).actions[action], `${action} sent`).to.equal(before + 2);
      expect(
        logger.lines.filter((l) => l.level === 'info' && l.meta.action === action).map((l) => l.message),
      ).to.have.length(1);
      return out;
    };

    it('usageTriggers.delete: the trigger is gone, and the call answers { success: true }', async () => {
      const t = await client.usageTriggers.create({
        accountName: account,
        serviceName: 'Location',
        triggerName: 'gone',
        thresholdValue: '50',
        allowExcess: true,
        sendSmsNotification: false,
        sendEmailNotification: true,
        emailAddresses: 'ops@example.com',
      });
      const out = await sentTwice('usageTriggers.delete', () =>
        client.usageTriggers.delete({ accountName: account, triggerId: t.triggerId }),
      );
      expect(out).to.deep.equal({ success: true });
      const line = logger.lines.find((l) => l.level === 'info' && l.meta.action === 'usageTriggers.delete')!;
      expect(line.message).to.match(/already gone/);
      expect(line.meta.error).to.match(/^Trigger not found/);
    });

    it('locationCallbacks.deregister: the listener is gone, and the call answers { success: true }', async () => {
      await client.locationCallbacks.register({ accountName: account, url: 'http://127.0.0.1:9/location' });
      const out = await sentTwice('locationCallbacks.deregister', () =>
        client.locationCallbacks.deregister({ accountName: account }),
      );
      expect(out).to.deep.equal({ success: true });
    });

    it('location.cancelReport: the report is gone, and the call answers { txid }', async () => {
      const [device] = (await client.devices.list({ accountName: account })).devices as Json[];
      const id = ((device!.deviceIds as Json[]).find((d) => d.kind === 'imei') as Json).id as string;
      const made = await client.location.createReport({
        accountName: account,
        deviceList: [{ id, kind: 'imei' }],
        cacheMode: '2',
      });
      const txid = made.reports[0]!.txid;
      const out = await sentTwice('location.cancelReport', () =>
        client.location.cancelReport({ accountName: account, txid }),
      );
      expect(out).to.deep.equal({ txid });
    });

    it('callbacks.deregister and groups.delete: gone, with the answers they give', async () => {
      await client.callbacks.register({
        accountName: account,
        name: 'DeviceUsage',
        url: 'http://127.0.0.1:9/u',
      });
      const listener = await sentTwice('callbacks.deregister', () =>
        client.callbacks.deregister({ accountName: account, serviceName: 'DeviceUsage' }),
      );
      expect(listener).to.deep.equal({ accountName: account, serviceName: 'DeviceUsage' });
      await client.groups.create({ accountName: account, groupName: 'Gone soon', groupDescription: 'x' });
      const group = await sentTwice('groups.delete', () =>
        client.groups.delete({ accountName: account, groupName: 'Gone soon' }),
      );
      expect(group).to.deep.equal({ success: true });
    });

    it('a "not found" to a first attempt is still an error', async () => {
      const trigger = await failure(
        client.usageTriggers.delete({
          accountName: account,
          triggerId: '00000000-0000-4000-8000-000000000000',
        }),
      );
      expect(trigger?.apiMessage).to.match(/^Trigger not found/);
      const listener = await failure(client.locationCallbacks.deregister({ accountName: account }));
      expect(listener?.apiMessage).to.match(/^No Location callback listener/);
      const report = await failure(
        client.location.cancelReport({ accountName: account, txid: 'no-such-report' }),
      );
      expect(report?.apiMessage).to.equal('Report not found');
    });
  });

  describe('against a recorder: which earlier answers may mean the service acted', () => {
    let rec: Recorder;
    let client: Client;
    const ID = '11111111-2222-4333-8444-555555555555';
    const PATH = `/api/subsc/v1/usage/accounts/0000123456-00001/triggers/${ID}`;
    const notFound = {
      status: 400,
      body: { errorCode: 'INVALID_PARAMETER', errorMessage: `Trigger not found: ${ID}` },
    };
    const del = () => client.usageTriggers.delete({ accountName: '0000123456-00001', triggerId: ID });

    beforeEach(async () => {
      rec = await Recorder.start();
      client = createClient({ baseUrl: rec.baseUrl, ...rec.credentials, retry: FAST_RETRY });
    });
    afterEach(async () => {
      await client.close();
      await rec.close();
    });

    it('a 500 may have acted: the repeat answered "not found" succeeds', async () => {
      rec.enqueue(
        `DELETE ${PATH}`,
        { status: 500, body: { errorCode: 'INTERNAL_ERROR', errorMessage: 'x' } },
        notFound,
      );
      expect(await del()).to.deep.equal({ success: true });
      expect(rec.requestsTo(PATH)).to.have.length(2);
    });

    it('a 503 says the service did nothing: the repeat answered "not found" is the error', async () => {
      rec.enqueue(
        `DELETE ${PATH}`,
        { status: 503, body: { errorCode: 'UNAVAILABLE', errorMessage: 'x' } },
        notFound,
      );
      expect((await failure(del()))?.apiMessage).to.equal(`Trigger not found: ${ID}`);
      expect(rec.requestsTo(PATH)).to.have.length(2);
    });

    it('another refusal to the repeat is still the error', async () => {
      const other = {
        status: 400,
        body: { errorCode: 'INVALID_PARAMETER', errorMessage: 'Invalid account' },
      };
      rec.enqueue(`DELETE ${PATH}`, { destroy: true }, other);
      expect((await failure(del()))?.apiMessage).to.equal('Invalid account');
    });

    it('a repeat the caller says follows such an attempt (a step retried, a run resumed) succeeds on its first', async () => {
      rec.enqueue(`DELETE ${PATH}`, notFound);
      const out = await client.callByName(
        'usageTriggers.delete',
        { accountName: '0000123456-00001', triggerId: ID },
        { repeat: true },
      );
      expect(out).to.deep.equal({ success: true });
      expect(rec.requestsTo(PATH)).to.have.length(1);
    });
  });
});
