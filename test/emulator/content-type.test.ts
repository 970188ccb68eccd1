/**
 * Spec 5: every operation requires `Content-Type: application/json`. The emulator served requests without it
 * and with any other type. Now it answers them as spec 7.1 answers an invalid request, 400 INVALID_PARAMETER,
 * in the body shape of the operation's area; the OAuth token request stays form-encoded.
 */
import { expect } from 'chai';
import { request } from 'undici';
import { onWorld, type Json } from './helpers.js';

describe('emulator: operations take Content-Type application/json', () => {
  const t = onWorld({ devicesPerAccount: 20 });

  /** An authenticated call with `contentType` (none when undefined). */
  async function call(method: 'GET' | 'POST', path: string, contentType?: string, body?: Json) {
    const headers: Record<string, string> = {
      authorization: `Bearer ${await t.raw.token()}`,
      'x-m2m-token': await t.raw.session(),
      ...(contentType !== undefined ? { 'content-type': contentType } : {}),
    };
    const res = await request(`${t.emu.url}/api${path}`, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Json };
  }

  it('refuses a request without the header, or with another type, in the shape of each area', async () => {
    const devices = { accountName: t.account, maxNumberOfDevices: 1 };
    expect(await call('POST', '/m2m/v1/devices/actions/list', undefined, devices)).to.deep.equal({
      status: 400,
      body: { errorCode: 'INVALID_PARAMETER', errorMessage: 'Content-Type: application/json is required' },
    });
    expect(await call('POST', '/m2m/v1/devices/actions/list', 'text/plain', devices)).to.deep.equal({
      status: 400,
      body: {
        errorCode: 'INVALID_PARAMETER',
        errorMessage: 'Content-Type must be application/json, not text/plain',
      },
    });
    expect(await call('GET', `/m2m/v1/accounts/${t.account}`)).to.deep.include({ status: 400 });
    expect(await call('GET', '/m2m/v2/triggers', 'application/x-www-form-urlencoded')).to.deep.equal({
      status: 400,
      body: {
        error: 'INVALID_PARAMETER',
        error_description: 'Content-Type must be application/json, not application/x-www-form-urlencoded',
      },
    });
    expect(
      await call('POST', '/dm/v1/devices/sensors/actions/query', 'text/json', { accountname: t.account }),
    ).to.deep.equal({
      status: 400,
      body: {
        error: 'INVALID_PARAMETER',
        error_description: 'Content-Type must be application/json, not text/json',
        cause: 'Content-Type',
      },
    });
  });

  it('serves application/json in any case and with a charset', async () => {
    const r = await call('GET', `/m2m/v1/accounts/${t.account}`, 'Application/JSON; charset=utf-8');
    expect(r.status).to.equal(200);
  });

  it("serves fleetbook's client: its form-encoded token request, then its operations", async () => {
    const page = await t.client.devices.list({ accountName: t.account });
    expect(page.devices.length).to.be.greaterThan(0);
    expect((await t.client.accounts.get({ accountName: t.account })).accountName).to.equal(t.account);
  });
});
