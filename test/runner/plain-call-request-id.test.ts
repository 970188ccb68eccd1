/**
 * A plain call the spec answers with `{ requestId }` (an SMS, a suspension status or usage report sent by
 * callback), answered 2xx without one: its devices were recorded `succeeded`, and the step succeeded, while an
 * answer whose request id had a NUL gave them `MALFORMED ANSWER` and failed it. A device action's answer without
 * one already failed so (answer-without-request-id.test.ts). Now every answer the spec promises a request id goes
 * the same way: refused ("it has no requestId"), the devices it names `unconfirmed` (`MALFORMED ANSWER`), sent
 * once, and the step fails saying why (docs/spec-decisions.md, "Asynchronous requests").
 *
 * The real emulator does the work; a proxy in front of it rewrites its answer (test/helpers).
 */
import { expect } from 'chai';
import { ACTIONS, CATALOG, type Operation } from '../../src/api/catalog.js';
import { RequestAccepted } from '../../src/api/schemas/common.js';
import { calls, imeiList, memoryStore, type Json } from './helpers.js';
import { behindRewritingProxy } from './proxied.js';

describe('runner: a plain call answered without the request id the spec promises', function () {
  this.timeout(30_000);
  const w = behindRewritingProxy(memoryStore);

  const sms = () => `    uses: sms.send
    with:
      accountName: "\${{ inputs.account }}"
      deviceIds: ${imeiList(w.active.slice(0, 2))}
      smsMessage: hello`;

  it('declares, for each action, that it answers a request id exactly where its output schema says so', () => {
    // Declared (Operation.answersRequestId), so that a run of a valid playbook never loads the schemas.
    const declared = ACTIONS.filter((a) => (CATALOG[a] as Operation).answersRequestId);
    expect(declared).to.deep.equal(
      ACTIONS.filter((a) => JSON.stringify(CATALOG[a].output) === JSON.stringify(RequestAccepted)),
    );
    expect(declared).to.include.members(['sms.send', 'devices.suspensionStatus', 'usage.aggregateAsync']);
  });

  for (const [what, answer] of [
    ['no request id', ({ requestId: _, ...rest }: Json) => rest],
    ['an empty request id', (body: Json) => ({ ...body, requestId: '' })],
    ['a request id that is not a text', (body: Json) => ({ ...body, requestId: 42 })],
  ] as const)
    it(`sms.send, ${what}: its devices unconfirmed (MALFORMED ANSWER), sent once, the step failed`, async () => {
      w.rewrite = (method, path, body) =>
        method === 'POST' && path.endsWith('/m2m/v1/sms') ? answer(body as Json) : undefined;
      const s = await w.runStep(sms());
      expect(w.proxy.rewritten, 'answers rewritten').to.be.greaterThan(0);
      expect(s.status).to.equal('failed');
      const step = s.steps[0]!;
      expect(step.status).to.equal('failed');
      expect(step.error).to.match(/sms\.send: the service's answer is refused: it has no requestId/);
      expect(await w.ledger(s.runId)).to.deep.equal([
        [w.active[0], 'unconfirmed', 'MALFORMED ANSWER', undefined],
        [w.active[1], 'unconfirmed', 'MALFORMED ANSWER', undefined],
      ]);
      expect(step.devices.byError).to.deep.equal({ 'MALFORMED ANSWER': 2 });
      expect((await calls(w.emu)).actions['sms.send'], 'SMS sent').to.equal(1);
    });

  it('sms.send answered with its request id: accepted under it, as before', async () => {
    const s = await w.runStep(sms());
    expect(s.status, s.error).to.equal('succeeded');
    const rows = await w.ledger(s.runId);
    expect(rows.map((r) => r[1])).to.deep.equal(['accepted', 'accepted']);
    expect(rows[0]![3]).to.be.a('string').and.not.equal('');
  });

  for (const [action, path] of [
    ['devices.suspensionStatus', '/m2m/v1/devices/suspension/status'],
    ['usage.aggregateAsync', '/m2m/v1/devices/usage/actions/list/aggregate'],
  ] as const)
    it(`${action} (a report sent by callback), no request id: the step failed saying so`, async () => {
      w.rewrite = (method, p, body) =>
        method === 'POST' && p.endsWith(path) ? { ...(body as Json), requestId: undefined } : undefined;
      const input =
        action === 'usage.aggregateAsync'
          ? `{ accountName: "\${{ inputs.account }}", startTime: "2026-01-01T00:00:00Z", endTime: "2026-01-02T00:00:00Z" }`
          : `{ accountName: "\${{ inputs.account }}" }`;
      const s = await w.runStep(`    uses: ${action}\n    with: ${input}`);
      expect(w.proxy.rewritten, 'answers rewritten').to.be.greaterThan(0);
      expect(s.status).to.equal('failed');
      expect(s.steps[0]!.error).to.include(`${action}: the service's answer is refused: it has no requestId`);
      expect((await calls(w.emu)).actions[action], 'requests sent').to.equal(1);
    });
});
