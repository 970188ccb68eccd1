/**
 * The one sign that a 401 refused the request's bearer token, not what it asked (a login's password): the bearer
 * scheme's challenge with `error="invalid_token"` (RFC 6750 section 3). Anything else is not taken for it, so that a
 * login so refused is still counted as a failed login of the user (test/client/refused-bearer-login.test.ts).
 */
import { expect } from 'chai';
import { refusesBearer } from '../../src/api/http.js';

describe('refusesBearer: the challenge of a refused bearer token', () => {
  const cases: [string | string[] | undefined, boolean][] = [
    ['Bearer realm="api", error="invalid_token", error_description="The access token expired"', true],
    ['Bearer error="invalid_token"', true],
    ['bearer error=invalid_token', true],
    ['Basic realm="x", Bearer realm="y", error="invalid_token"', true],
    [['Basic realm="x"', 'Bearer error="invalid_token"'], true],
    // A challenge with no error code asks for a token; it does not refuse one sent.
    ['Bearer realm="api"', false],
    ['Bearer error="invalid_request"', false],
    ['Bearer error="insufficient_scope"', false],
    ['Bearer error="invalid_tokens"', false],
    // The words inside another parameter's quoted value, or under another scheme, are not the error code.
    ['Bearer realm="error=\\"invalid_token\\""', false],
    ['Bearer realm="a", error_description="invalid_token"', false],
    ['Bearer realm="y", Basic error="invalid_token"', false],
    ['Basic error="invalid_token"', false],
    ['', false],
    [undefined, false],
  ];
  for (const [challenge, refused] of cases)
    it(`${JSON.stringify(challenge)}: ${refused ? 'refused' : 'not told'}`, () => {
      expect(refusesBearer(challenge)).to.equal(refused);
    });
});
