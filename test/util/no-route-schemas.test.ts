/** A server made with NO_ROUTE_SCHEMAS serves its routes, and refuses one that declares a schema it would not check. */
import { expect } from 'chai';
import Fastify from 'fastify';
import { NO_ROUTE_SCHEMAS } from '../../src/util/no-route-schemas.js';

describe('NO_ROUTE_SCHEMAS', () => {
  it('serves a route without a schema', async () => {
    const app = Fastify({ schemaController: NO_ROUTE_SCHEMAS });
    app.post('/echo', (req) => ({ got: req.body }));
    try {
      const res = await app.inject({ method: 'POST', url: '/echo', payload: { a: 1 } });
      expect(res.statusCode).to.equal(200);
      expect(res.json()).to.deep.equal({ got: { a: 1 } });
    } finally {
      await app.close();
    }
  });

  it('refuses a route whose body schema it would not check, by its method and URL', async () => {
    const app = Fastify({ schemaController: NO_ROUTE_SCHEMAS });
    app.post('/checked', { schema: { body: { type: 'object', required: ['a'] } } }, () => ({}));
    try {
      const refused = await app.ready().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(String(refused)).to.match(/POST: \/checked.*compiles no validation schemas/);
    } finally {
      await app.close();
    }
  });

  it('refuses a route whose response schema it would not use', async () => {
    const app = Fastify({ schemaController: NO_ROUTE_SCHEMAS });
    app.get('/shaped', { schema: { response: { 200: { type: 'object' } } } }, () => ({}));
    try {
      const refused = await app.ready().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(String(refused)).to.match(/GET: \/shaped.*compiles no response schemas/);
    } finally {
      await app.close();
    }
  });
});
