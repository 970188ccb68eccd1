/**
 * The credentials of the real service, as a new user sets them: `call` and `run` refuse an incomplete or
 * malformed set, naming each variable, before any request and before a run is recorded; and credentials set
 * without FLEETBOOK_API_URL are refused rather than left unread while an embedded emulator answers.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { fleetbook } from '../helpers/cli.js';
import { Recorder } from '../helpers/recorder.js';
import { tempDir } from '../helpers/temp.js';

const PLAYBOOK = join(import.meta.dirname, '..', '..', 'playbooks', 'nightly-location-report.yaml');
const BODY = ['--body', '{"accountName":"0000123456-00001"}'];

describe('the credentials of the real service', function () {
  this.timeout(30_000);
  let rec: Recorder;
  let full: Record<string, string>;

  beforeEach(async () => {
    rec = await Recorder.start();
    full = {
      FLEETBOOK_API_URL: rec.baseUrl,
      FLEETBOOK_CLIENT_ID: rec.credentials.clientId,
      FLEETBOOK_CLIENT_SECRET: rec.credentials.clientSecret,
      FLEETBOOK_USERNAME: rec.credentials.username,
      FLEETBOOK_PASSWORD: rec.credentials.password,
    };
  });
  afterEach(() => rec.close());

  it('refuses an incomplete set, naming what is missing, before any request or run', async () => {
    const cases: [Record<string, string | undefined>, string[]][] = [
      [{ FLEETBOOK_PASSWORD: undefined }, ['FLEETBOOK_PASSWORD is not set: the session login needs both']],
      [
        { FLEETBOOK_CLIENT_SECRET: undefined, FLEETBOOK_USERNAME: undefined },
        [
          'FLEETBOOK_CLIENT_SECRET is not set: the OAuth client credentials need both',
          'FLEETBOOK_USERNAME is not set: the session login needs both',
        ],
      ],
      [
        { FLEETBOOK_CLIENT_ID: undefined, FLEETBOOK_CLIENT_SECRET: undefined },
        ['no bearer token: set FLEETBOOK_ACCESS_TOKEN, or FLEETBOOK_CLIENT_ID and FLEETBOOK_CLIENT_SECRET'],
      ],
      [
        { FLEETBOOK_CLIENT_SECRET: 'a secret ' },
        ['FLEETBOOK_CLIENT_SECRET: begins or ends with white space, which would be sent as part of it'],
      ],
      [
        { FLEETBOOK_CLIENT_ID: 'fleet:client' },
        ['FLEETBOOK_CLIENT_ID: has a colon, which the OAuth Basic credential (id:secret) cannot carry'],
      ],
    ];
    for (const [change, messages] of cases) {
      const env = Object.fromEntries(
        Object.entries({ ...full, ...change }).filter((e): e is [string, string] => e[1] !== undefined),
      );
      const dir = tempDir('fleetbook-credentials-');
      const state = join(dir, 'state.db');
      for (const args of [
        ['call', 'plans.list', ...BODY],
        ['run', PLAYBOOK],
      ]) {
        const r = await fleetbook(args, { ...env, FLEETBOOK_STATE: state });
        expect(r.code, `${args[0]} ${JSON.stringify(change)}: ${r.stderr}`).to.equal(2);
        for (const m of messages) expect(r.stderr).to.include(m);
        expect(r.stderr).not.to.include('a secret');
      }
      expect(rec.requests, JSON.stringify(change)).to.have.length(0);
      expect(existsSync(state), 'no run recorded').to.equal(false);
    }
  });

  it('refuses credentials without FLEETBOOK_API_URL rather than answer from an embedded emulator', async () => {
    const { FLEETBOOK_API_URL: _url, ...credentials } = full;
    for (const env of [credentials, { ...credentials, FLEETBOOK_API_URL: '' }]) {
      const r = await fleetbook(['call', 'plans.list', ...BODY], env);
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stdout).to.equal('');
      expect(r.stderr).to.include(
        'FLEETBOOK_CLIENT_ID, FLEETBOOK_CLIENT_SECRET, FLEETBOOK_USERNAME, FLEETBOOK_PASSWORD are set, but FLEETBOOK_API_URL is not',
      );
    }
  });

  it('offers --api-url only to the command that takes it', async () => {
    const dir = tempDir('fleetbook-credentials-');
    const env = { FLEETBOOK_USERNAME: 'ops', FLEETBOOK_STATE: join(dir, 'state.db') };
    const call = await fleetbook(['call', 'plans.list', ...BODY], env);
    expect(call.code, call.stderr).to.equal(2);
    expect(call.stderr).to.include(
      'FLEETBOOK_USERNAME is set, but FLEETBOOK_API_URL is not: set it (or --api-url) to',
    );
    // `run` and `serve` have no --api-url: `run --api-url` is an unknown option.
    for (const args of [
      ['run', PLAYBOOK],
      ['serve', '--playbooks', PLAYBOOK, '--listen', '127.0.0.1:0'],
    ]) {
      const r = await fleetbook(args, env);
      expect(r.code, `${args[0]}: ${r.stderr}`).to.equal(2);
      expect(r.stderr, args[0]).to.include(
        'FLEETBOOK_USERNAME is set, but FLEETBOOK_API_URL is not: set it to',
      );
      expect(r.stderr, args[0]).not.to.include('--api-url');
    }
  });

  it("names `call`'s flags when they gave a credential", async () => {
    const noUrl = await fleetbook(
      ['call', 'plans.list', ...BODY, '--username', 'ops', '--client-id', 'c1'],
      {},
    );
    expect(noUrl.code, noUrl.stderr).to.equal(2);
    expect(noUrl.stderr).to.include('--client-id, --username are set, but FLEETBOOK_API_URL is not');
    const incomplete = await fleetbook(
      ['call', 'plans.list', ...BODY, '--api-url', full.FLEETBOOK_API_URL!, '--client-id', 'c1'],
      { FLEETBOOK_ACCESS_TOKEN: 'token-0001', FLEETBOOK_PASSWORD: 'password-0001' },
    );
    expect(incomplete.code, incomplete.stderr).to.equal(2);
    expect(incomplete.stderr).to.include(
      'the credentials of --api-url are incomplete:\n  FLEETBOOK_USERNAME is not set: the session login needs both',
    );
    expect(rec.requests).to.have.length(0);
  });

  it('refuses an API URL with a user, a query or a fragment, without showing it', async () => {
    const url = `http://ops:url-password-1@127.0.0.1:${rec.listeningPort}/api?region=east`;
    const r = await fleetbook(['call', 'plans.list', ...BODY], { ...full, FLEETBOOK_API_URL: url });
    expect(r.code, r.stderr).to.equal(2);
    expect(r.stderr).to.include('FLEETBOOK_API_URL: has a user, a query, which fleetbook does not send');
    expect(r.stderr).not.to.include('url-password-1');
    expect(rec.requests).to.have.length(0);
  });
});
