/**
 * GET / and GET /console/*: the web console (INTERFACE.md section 15), built into dist/console by
 * scripts/buildConsole.ts. The server only serves it: the page talks to the public API like any client.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** Where the build puts the console: dist/console, beside dist/src. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

/** The URL prefix of the console's files; their names carry a content hash, so they never change. */
export const CONSOLE_PREFIX = '/console/';

/**
 * The page's policy: its own origin only, for scripts, styles, data and images; no frames, no plugins, no
 * forms posted anywhere. Styles set through the DOM (the chart library sizes its canvases so) are not
 * inline style and need no exception.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** A file the build named by its content (`/app-0123456789.js`), or a compressed form of one. */
const HASHED_NAME = /^\/[a-z]+-[0-9a-f]{10}\.[a-z]+(\.br|\.gz)?$/;

/** The page's mark that the server fills in when it serves it: whether the API wants a key right now. */
const KEYS_MARK = 'data-keys="unknown"';

/**
 * Registers the console; false when it was not built (the page then answers 404 like any unknown path).
 * `keysRequired` is asked on every load of the page, so that it asks for a key before its first request
 * rather than after a refusal.
 */
export async function consoleRoutes(app: FastifyInstance, keysRequired: () => boolean, dir: string = CONSOLE_DIR): Promise<boolean> {
  const indexFile = dir + 'index.html';
  if (!existsSync(indexFile)) return false;
  const text = readFileSync(indexFile, 'utf8');
  const pages = {
    required: Buffer.from(text.replace(KEYS_MARK, 'data-keys="required"')),
    optional: Buffer.from(text.replace(KEYS_MARK, 'data-keys="optional"')),
  };
  app.get('/', { schema: { hide: true } }, (_req, reply) => {
    const page = keysRequired() ? pages.required : pages.optional;
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', CONSOLE_CSP)
      .header('referrer-policy', 'no-referrer')
      // The page names the current build's files: it is checked on every load, the files are cached for good.
      .header('cache-control', 'no-cache')
      .send(page);
  });
  await app.register(fastifyStatic, {
    root: dir,
    prefix: CONSOLE_PREFIX,
    // The build writes .br and .gz beside each file; the one the client accepts is sent as it is.
    preCompressed: true,
    index: false,
    // Two registrations (the docs page has its own): only the first may decorate the reply.
    decorateReply: false,
    maxAge: '365d',
    immutable: true,
    schemaHide: true,
    // Only the build's hashed files (and their compressed forms): not the page, which is served at / with
    // its policy and its mark filled in, nor the build's manifest.
    allowedPath: (path) => HASHED_NAME.test(path),
  });
  return true;
}
