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

/** Registers the console; false when it was not built (the page then answers 404 like any unknown path). */
export async function consoleRoutes(app: FastifyInstance, dir: string = CONSOLE_DIR): Promise<boolean> {
  const indexFile = dir + 'index.html';
  if (!existsSync(indexFile)) return false;
  const page = readFileSync(indexFile);
  app.get('/', { schema: { hide: true } }, (_req, reply) => {
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
    allowedPath: (path) => path !== '/index.html',
  });
  return true;
}
