/**
 * A `log` step's message is any value: a string is logged as it is, anything else as its JSON text (a count,
 * a step's output), so that `fleetbook validate` has no type of message to refuse and none is logged as
 * `[object Object]`.
 */
import { expect } from 'chai';
import { onEmulator, runLogged } from './helpers.js';

describe('runner: a log step writes its message as text', () => {
  const t = onEmulator();

  it('logs a string as it is, a number and a map as their JSON text', async () => {
    const { s, lines } = await runLogged(
      t,
      `
version: 1
name: log-message
on: { manual: true }
vars: { plan: { name: basic, devices: 3 } }
steps:
  - id: text
    uses: log
    with: { message: 'plan \${{ vars.plan.name }}' }
  - id: count
    uses: log
    with: { message: '\${{ vars.plan.devices * 2 }}' }
  - id: whole
    uses: log
    with: { message: '\${{ vars.plan }}' }
`,
    );
    expect(s.status, s.error).to.equal('succeeded');
    const said = lines.map((l) => l.message);
    expect(said).to.include.members(['plan basic', '6', '{"name":"basic","devices":3}']);
  });
});
