/**
 * A dry run's check of the webhooks it plans (checkWebhook) resolves their host as the real run's connection
 * would, and judges every address. Two faults:
 * - a host that does not resolve passed the dry run as `planned`, while the real run failed on it (ENOTFOUND);
 * - inside a loop, the host was looked up again at every iteration: a dry run of a loop of a thousand devices sent
 *   a thousand DNS queries for one name. It is now resolved once per host per run.
 *
 * The real DNS lookup of the machine, counted (a name in the `.invalid` domain never resolves, RFC 6761), and a
 * real receiver on loopback that nothing reaches.
 */
import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { expect } from 'chai';
import { engineSettings } from '../../src/actions/settings.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { onEmulator, runLogged, stepOf } from './helpers.js';

describe('runner: a dry run resolves a webhook host as the real run would, once', function () {
  this.timeout(30_000);
  const t = onEmulator();
  let hook: Receiver;
  before(async () => {
    hook = await startReceiver();
  });
  after(() => hook.close());

  /** Settings whose DNS lookup is the machine's, counted by host; loopback allowed by address, not by name. */
  function counted(): { engine: ReturnType<typeof engineSettings>; looked: Map<string, number> } {
    const looked = new Map<string, number>();
    const lookup = ((host: string, o: object, cb: (...a: unknown[]) => void) => {
      looked.set(host, (looked.get(host) ?? 0) + 1);
      dnsLookup(host, o, cb);
    }) as unknown as LookupFunction;
    return { engine: engineSettings({ webhookAllow: ['127.0.0.1', '::1'], lookup }), looked };
  }

  const webhook = (url: string) => `
version: 1
name: dry-unresolved
on: { manual: true }
steps:
  - id: tell
    uses: notify.webhook
    with: { url: "${url}", body: { text: hi } }
  - id: after
    uses: log
    with: { message: after }
`;

  it('fails a webhook to a host that does not resolve, as the real run does', async () => {
    const url = 'https://hooks.fleetbook-test.invalid/page';
    const dry = await runLogged(t, webhook(url), { dryRun: true, engine: counted().engine });
    const real = await runLogged(t, webhook(url), { engine: counted().engine });
    expect(real.s.status).to.equal('failed');
    expect(stepOf(real.s, 'tell').error).to.match(/ENOTFOUND/);
    expect(dry.s.status, 'the dry run').to.equal('failed');
    expect(stepOf(dry.s, 'tell').error, 'the dry run').to.equal(stepOf(real.s, 'tell').error);
    expect(dry.s.planned ?? [], 'calls planned').to.deep.equal([]);
  });

  it('fails a webhook to an allowed name that does not resolve, as the real run does', async () => {
    const url = 'https://hooks.fleetbook-test.invalid/page';
    const engine = engineSettings({
      webhookAllow: ['hooks.fleetbook-test.invalid'],
      lookup: dnsLookup as unknown as LookupFunction,
    });
    const dry = await runLogged(t, webhook(url), { dryRun: true, engine });
    const real = await runLogged(t, webhook(url), { engine });
    expect(stepOf(real.s, 'tell').error).to.match(/ENOTFOUND/);
    expect(dry.s.status, 'the dry run').to.equal('failed');
    expect(stepOf(dry.s, 'tell').error, 'the dry run').to.equal(stepOf(real.s, 'tell').error);
  });

  it('looks each host up once in a run, however many iterations send to it', async () => {
    const { engine, looked } = counted();
    const { s } = await runLogged(
      t,
      `
version: 1
name: dry-loop-lookups
on: { manual: true }
steps:
  - id: each
    forEach:
      items: \${{ [1, 2, 3, 4, 5, 6] }}
      steps:
        - id: tell
          uses: notify.webhook
          with: { url: "http://localhost:${hook.port}/hook/\${{ item }}", body: { text: hi } }
        - id: other
          uses: notify.webhook
          with: { url: "http://LocalHost.:${hook.port}/other", body: { text: hi } }
`,
      { dryRun: true, engine },
    );
    expect(s.status, s.error).to.equal('succeeded');
    expect(s.planned?.find((p) => p.step === 'tell')?.calls).to.equal(6);
    expect(Object.fromEntries(looked)).to.deep.equal({ localhost: 1 });
    expect(hook.bodies.length, 'requests the hook received').to.equal(0);
    // Another run looks it up again: a name's addresses may have changed since.
    await runLogged(t, webhook(`http://localhost:${hook.port}/hook`), { dryRun: true, engine });
    expect(Object.fromEntries(looked)).to.deep.equal({ localhost: 2 });
  });
});
