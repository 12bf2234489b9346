// The apps' fastify option that loads no JSON-schema compilers: plain routes answer as
// before, and a route that declares a schema is refused when the app gets ready, saying why.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { NO_SCHEMAS } from '../../src/lib/no-schemas.js';

describe('NO_SCHEMAS', () => {
  it('serves routes without schemas, with JSON bodies in and out', async () => {
    const app = Fastify({ schemaController: NO_SCHEMAS });
    app.post('/echo', async (request) => ({ got: request.body }));
    try {
      const answer = await app.inject({ method: 'POST', url: '/echo', payload: { a: [1, 'two'] } });
      expect(answer.statusCode).toBe(200);
      expect(answer.json()).toEqual({ got: { a: [1, 'two'] } });
    } finally {
      await app.close();
    }
  });

  it.each([
    ['a body schema', { body: { type: 'object' } }],
    ['a response schema', { response: { 200: { type: 'object' } } }],
  ])('refuses a route with %s, naming where to check the input', async (_name, schema) => {
    const app = Fastify({ schemaController: NO_SCHEMAS });
    app.post('/typed', { schema }, async () => ({}));
    await expect(app.ready()).rejects.toThrow('This app compiles no JSON schemas');
    await app.close();
  });
});
