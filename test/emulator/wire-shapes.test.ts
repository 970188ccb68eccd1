/**
 * The real service's wire shapes where the spec is silent (issue 17, docs/spec-decisions.md), as the emulator
 * accepts and emulates them, driven over loopback.
 */
import { expect } from 'chai';
import type { Emulator } from '../../src/emulator/index.js';
import { emulator, Raw, world, type Json, type World } from './helpers.js';

describe('emulator: the real service wire shapes', function () {
  this.timeout(30_000);
  let emu: Emulator;
  let raw: Raw;
  let seed: World;
  let account: string;

  before(async () => {
    emu = await emulator({ seed: 'wire-shapes', devicesPerAccount: 40 });
    raw = new Raw(emu);
    seed = await world(raw);
    account = seed.accounts[0]!.accountName;
  });
  after(() => emu.close());

  describe('the session header', () => {
    const listing = async (headers: Record<string, string>) =>
      raw.send('GET', `/api/m2m/v1/callbacks/${account}`, undefined, {
        authorization: `Bearer ${await raw.token()}`,
        ...headers,
      });

    it('is read as X-M2M-Token, the spec name, or VZ-M2M-Token, the real service name', async () => {
      const token = await raw.session();
      expect((await listing({ 'X-M2M-Token': token })).status).to.equal(200);
      expect((await listing({ 'VZ-M2M-Token': token })).status).to.equal(200);
    });

    it('is required under one of those names', async () => {
      const token = await raw.session();
      const r = await listing({ 'X-Session-Token': token });
      expect(r.status).to.equal(401);
      expect((r.body as Json).errorMessage).to.equal(
        'An X-M2M-Token or VZ-M2M-Token session token is required',
      );
    });
  });
});
