// fastify's `schemaController` for apps whose routes declare no JSON schema (they check
// their input by hand and answer with JSON.stringify): fastify would otherwise load ajv and
// fast-json-stringify when an app is made, about 200 ms of CPU for each of the service's and
// the sandbox's, on every start of the embedded service. A route that declares a schema
// fails at its registration, saying why.
import type { FastifyServerOptions } from 'fastify';

function refuse(): never {
  throw new Error('This app compiles no JSON schemas (src/lib/no-schemas.ts): check the input in the handler.');
}

export const NO_SCHEMAS: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: {
    buildValidator: () => refuse,
    buildSerializer: () => refuse,
  },
};
