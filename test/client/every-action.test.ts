/**
 * Every action of the catalog, over real loopback HTTP: the method, the path under the base path `/api` with
 * its parameters filled and URL-encoded, both tokens and the content type, the body as sent (path parameters
 * removed, the spellings the spec contradicts itself on normalised), and the area budget it went through.
 *
 * The table below has one valid input per action. It is typed by `ActionName`, and the test walks `ACTIONS`:
 * an action added to the catalog without a case here fails both the type check and this test.
 */
import { expect } from 'chai';
import { ACTIONS, CATALOG, type ActionName } from '../../src/api/catalog.js';
import { createClient } from '../../src/api/client.js';
import { ACC, CASES, UUID36, type Case } from '../helpers/action-cases.js';
import { FAST_RATES, LOGIN_PATH, onRecorder, TOKEN_PATH } from '../helpers/recorder.js';

describe('every action over loopback HTTP', () => {
  const t = onRecorder();

  it('has exactly one case per catalog action', () => {
    expect(Object.keys(CASES).sort()).to.deep.equal([...ACTIONS].sort());
  });

  for (const action of ACTIONS) {
    it(`${action}: method, path, headers and body`, async () => {
      const c = (CASES as Record<string, Case<ActionName> | undefined>)[action];
      expect(c, `no case for action ${action}: add one to CASES`).to.not.equal(undefined);
      if (!c) return;
      const op = CATALOG[action];
      // A warm-up call outside the count, so that this action's request is the only one recorded below,
      // and the session the client holds is known.
      t.rec.requests.length = 0;
      await t.client.session.logout({});
      const session = t.rec.requestsTo('/api/m2m/v1/session/logout')[0]?.headers['x-m2m-token'];
      expect(session).to.be.oneOf(t.rec.issuedSessions);
      const startedBefore = Object.fromEntries(
        Object.entries(t.client.areas).map(([name, a]) => [name, a.stats.started]),
      );
      t.rec.requests.length = 0;

      const input = structuredClone(c.input);
      await t.client.callByName(action, input);
      expect(input, "the caller's input is not changed").to.deep.equal(c.input);

      const sent = t.rec.requests.filter((r) => r.path !== TOKEN_PATH);
      expect(sent, 'exactly one request').to.have.length(1);
      const req = sent[0]!;
      expect(req.method).to.equal(op.method);
      expect(req.url).to.equal(c.path);

      expect(req.headers.authorization).to.equal(`Bearer ${t.rec.issuedTokens.at(-1)}`);
      expect(req.headers['content-type']).to.equal('application/json');
      if (action === 'session.login') {
        expect(req.path).to.equal(LOGIN_PATH);
        expect(req.headers).to.not.have.property('x-m2m-token');
      } else {
        expect(req.headers['x-m2m-token']).to.equal(session);
      }

      if (op.method === 'GET' || op.method === 'DELETE') {
        expect(req.rawBody, 'no body on GET and DELETE').to.equal('');
      } else {
        expect(req.body).to.deep.equal(c.body);
      }

      // The request went through the budget of its own area, and no other.
      for (const [name, a] of Object.entries(t.client.areas)) {
        const delta = a.stats.started - (startedBefore[name] ?? 0);
        expect(delta, `starts in area ${name}`).to.equal(name === op.area ? 1 : 0);
      }
    });
  }

  it('triggers.list picks its route: every trigger, one account, or one trigger id', async () => {
    t.rec.requests.length = 0;
    await t.client.triggers.list({});
    await t.client.triggers.list({ accountName: ACC });
    await t.client.triggers.list({ triggerId: UUID36 });
    expect(t.rec.apiRequests().map((r) => `${r.method} ${r.url}`)).to.deep.equal([
      'GET /api/m2m/v2/triggers',
      `GET /api/m2m/v2/triggers/accounts/${ACC}`,
      `GET /api/m2m/v2/triggers/${UUID36}`,
    ]);
  });

  it('a base URL with a trailing slash does not double the slash', async () => {
    const c2 = createClient({ baseUrl: `${t.rec.baseUrl}/`, ...t.rec.credentials, rates: FAST_RATES });
    try {
      t.rec.requests.length = 0;
      await c2.location.getReportStatus({ accountName: ACC, txid: 'abc' });
      expect(t.rec.apiRequests().map((r) => r.url)).to.deep.equal([
        `/api/loc/v1/locationreports/${ACC}/report/abc/status`,
      ]);
    } finally {
      await c2.close();
    }
  });
});
