/**
 * Response serializers compiled on their first use rather than when the app starts. The framework compiles a
 * serializer for every response schema of every route as it starts (fast-json-stringify), most of which never
 * serialize anything: the error envelopes and the forecast page are written as bytes, and their schemas
 * document them in /openapi.json. Compiled by the first answer that needs them, a server listens after 890
 * instead of 1,018 ms (`npm run bench:cold`, docs/performance.md), and every app a test builds starts sooner.
 */
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
export type BuildSerializer = NonNullable<CompilersFactory['buildSerializer']>;

/** The framework's serializer factory (`build`, by default fast-json-stringify's), each serializer made on first use. */
export function lazySerializers(build: BuildSerializer = SerializerSelector() as unknown as BuildSerializer): BuildSerializer {
  return (externalSchemas, serializerOpts) => {
    const compile = build(externalSchemas, serializerOpts);
    return (route) => {
      let serialize: ((data: unknown) => string) | undefined;
      return (data: unknown) => (serialize ??= compile(route))(data);
    };
  };
}
