/**
 * The address `serve` registers for its callbacks when FLEETBOOK_CALLBACK_URL is unset is its listen address:
 * when the service cannot post there, the daemon says why (start-registrations.test.ts shows the warning of a
 * real daemon listening on 0.0.0.0). A loopback listen address with a service on another machine was not said.
 */
import { expect } from 'chai';
import { unreachableReason } from '../../src/daemon/registrations.js';

describe('the callback address a service cannot reach', () => {
  const remote = 'https://api.example.com/api';
  const local = 'http://127.0.0.1:4010/api';

  it('is a wildcard listen address, with any service', () => {
    for (const url of ['http://0.0.0.0:8080', 'http://[::]:8080'])
      for (const service of [remote, local])
        expect(unreachableReason(url, service, false), `${url} with ${service}`).to.match(
          /set FLEETBOOK_CALLBACK_URL/,
        );
  });

  it('is a loopback listen address with a service elsewhere', () => {
    for (const url of [
      'http://127.0.0.1:8080',
      'http://localhost:8080',
      'http://[::1]:8080',
      'http://127.1.2.3:80',
    ]) {
      const said = unreachableReason(url, remote, false);
      expect(said, url).to.match(/a loopback address, which the service at api\.example\.com cannot reach/);
      expect(said, url).to.match(/set FLEETBOOK_CALLBACK_URL/);
    }
  });

  it('is not a loopback listen address with a service on loopback too', () => {
    for (const service of [local, 'http://localhost:4010/api', 'http://[::1]:4010/api'])
      expect(unreachableReason('http://127.0.0.1:8080', service, false), service).to.equal(undefined);
  });

  it('is not a routable listen address, nor any address once FLEETBOOK_CALLBACK_URL is given', () => {
    expect(unreachableReason('http://10.1.2.3:8080', remote, false)).to.equal(undefined);
    for (const url of ['http://0.0.0.0:8080', 'http://127.0.0.1:8080'])
      expect(unreachableReason(url, remote, true), url).to.equal(undefined);
  });
});
