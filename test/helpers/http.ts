/** A real app on a real port for HTTP tests. */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { buildApp, type AppOptions } from '../../src/http/app.js';
import type { AppContext } from '../../src/http/context.js';
import type { Store } from '../../src/store/store.js';
import { DEFAULT_RULES } from './fixtures.js';

/** Builds an app on the store and listens on a free port of 127.0.0.1. */
export async function listen(store: Store, extra: Partial<AppContext> = {}, opts: AppOptions = {}): Promise<{ app: FastifyInstance; base: string }> {
  const app = await buildApp({ store, rules: DEFAULT_RULES, version: 'test', ...extra }, opts);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  assert.ok(addr && typeof addr === 'object');
  return { app, base: `http://127.0.0.1:${addr.port}` };
}
