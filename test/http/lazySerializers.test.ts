import assert from 'node:assert/strict';
import { test } from 'node:test';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import Fastify from 'fastify';
import { lazySerializers, type BuildSerializer } from '../../src/http/lazySerializers.js';

const eager = SerializerSelector() as unknown as BuildSerializer;

/** The framework's own serializer factory, counting the serializers it compiles. */
function counting(): { build: BuildSerializer; compiled: string[] } {
  const compiled: string[] = [];
  const build: BuildSerializer = (schemas, opts) => {
    const compile = eager(schemas, opts);
    return (route) => {
      compiled.push(`${route.url} ${route.httpStatus}`);
      return compile(route);
    };
  };
  return { build, compiled };
}

const item = { type: 'object', properties: { id: { type: 'string' }, n: { type: 'integer' } } } as const;

async function appWith(build: BuildSerializer) {
  const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: build } } });
  app.get('/used', { schema: { response: { 200: item, 404: item } } }, async () => ({ id: 'a', n: 7, extra: 'not in the schema' }));
  app.get('/unused', { schema: { response: { 200: item } } }, async () => ({ id: 'b', n: 1 }));
  await app.ready();
  return app;
}

test('no serializer is compiled as the app starts; a route compiles its own on its first answer, once', async () => {
  const { build, compiled } = counting();
  const app = await appWith(lazySerializers(build));
  try {
    assert.deepEqual(compiled, []);
    for (let i = 0; i < 3; i++) assert.equal((await app.inject('/used')).body, '{"id":"a","n":7}');
    assert.deepEqual(compiled, ['/used 200']);
  } finally {
    await app.close();
  }
});

test('a lazily compiled serializer writes what the framework’s own writes', async () => {
  const lazy = await appWith(lazySerializers(eager));
  const own = await appWith(eager);
  try {
    for (const path of ['/used', '/unused']) assert.equal((await lazy.inject(path)).body, (await own.inject(path)).body);
  } finally {
    await lazy.close();
    await own.close();
  }
});
