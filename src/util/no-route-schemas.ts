/**
 * Fastify's schema compilers for a server none of whose routes declares a schema (the daemon's, the emulator's):
 * left to itself, fastify loads ajv and its JSON compilers as each server is made, about 60 ms of CPU at every
 * start of `serve` and `emulator`, for validators it never builds. A route given a schema is refused as it is
 * added, by its method and URL, rather than served with its schema unchecked.
 */
import type { FastifyServerOptions } from 'fastify';

const refuse = (what: string) => () => () => {
  throw new Error(`this server compiles no ${what} schemas: its routes check their input themselves`);
};

export const NO_ROUTE_SCHEMAS: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: { buildValidator: refuse('validation'), buildSerializer: refuse('response') },
};
