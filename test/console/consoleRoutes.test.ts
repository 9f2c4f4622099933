/**
 * The web console over a real port: the page at / with its policy headers, the built files under /console/
 * with their precompressed forms and cache headers, open to callers without a key while the API is not,
 * the 404 / 405 answers around them, and an app whose console was not built.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { CONSOLE_DIR, consoleRoutes } from '../../src/console/consoleRoutes.js';
import { CODES } from '../../src/domain/errors.js';
import type { AppContext } from '../../src/http/context.js';
import type { Store } from '../../src/store/store.js';
import { assertError } from '../http/support.js';
import { eventually, seed, tempDir, testStore } from '../helpers/fixtures.js';
import { listen } from '../helpers/http.js';
import { bearer, createKey } from '../helpers/keys.js';

interface Manifest {
  files: { name: string; bytes: number; gzipBytes: number }[];
}

const manifest = JSON.parse(readFileSync(join(CONSOLE_DIR, 'manifest.json'), 'utf8')) as Manifest;
const assets = manifest.files.filter((f) => f.name !== 'index.html').map((f) => f.name);
const jsFile = assets.find((n) => n.endsWith('.js'));
const PAGE = readFileSync(join(CONSOLE_DIR, 'index.html'), 'utf8');

/** The built page as the server fills in its mark: whether the API wants a key right now. */
const pageFor = (keys: 'required' | 'optional'): Buffer => Buffer.from(PAGE.replace('data-keys="unknown"', `data-keys="${keys}"`));

let store: Store;
let cleanup: () => Promise<void>;
const apps: FastifyInstance[] = [];

before(async () => {
  const s = await testStore();
  store = s.store;
  cleanup = s.cleanup;
  await seed(store, [{ farmId: 'WF_A', issue: '2026112000', opts: { steps: [0, 1] } }]);
});

after(async () => {
  for (const app of apps) await app.close();
  await cleanup?.();
});

/** A bare framework app (no forecastd routes) on a free port. */
async function listenBare(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  apps.push(app);
  const addr = app.server.address();
  assert.ok(addr && typeof addr === 'object');
  return `http://127.0.0.1:${addr.port}`;
}

async function serve(ctx: Partial<AppContext> = {}): Promise<string> {
  const { app, base } = await listen(store, ctx);
  apps.push(app);
  return base;
}

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One request with the path sent exactly as written (fetch would resolve dot segments and decode bodies) and
 * no Accept-Encoding unless given.
 */
function raw(at: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  const { hostname, port } = new URL(at);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const asInjected = (r: Raw) => ({ statusCode: r.status, headers: r.headers as Record<string, string | undefined>, body: r.body.toString('utf8') });

const CONTENT_TYPES: Record<string, RegExp> = {
  '.js': /javascript/,
  '.css': /^text\/css\b/,
  '.json': /^application\/json\b/,
  '.svg': /^image\/svg\+xml\b/,
};

describe('the console over a real port (keys off)', () => {
  let at = '';
  before(async () => {
    assert.ok(assets.length >= 4, `manifest lists the built files: ${JSON.stringify(manifest)}`);
    assert.ok(jsFile, 'the build has a script');
    at = await serve({ access: { auth: 'off' } });
  });

  test('GET / is the built page with a strict policy and no-cache, and every /console/ file it names answers 200', async () => {
    const res = await raw(at, '/');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['x-powered-by'], undefined);
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.ok(res.body.equals(pageFor('optional')), 'the body is dist/console/index.html, its mark filled in');
    assert.ok(!res.body.includes('data-keys="unknown"'), 'the mark never reaches the client');

    const csp = res.headers['content-security-policy'];
    assert.equal(typeof csp, 'string');
    const directives = String(csp).split(';').map((d) => d.trim());
    for (const d of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) {
      assert.ok(directives.includes(d), `CSP has ${d}: ${csp}`);
    }
    assert.doesNotMatch(String(csp), /unsafe-inline|unsafe-eval/);
    assert.doesNotMatch(String(csp), /https?:/, 'no origin beyond the page own');
    assert.doesNotMatch(String(csp), /\*/, 'no wildcard source');

    const html = res.body.toString('utf8');
    assert.ok(html.includes('<script type="module" src="/console/app-'), 'the page loads its module script');
    const refs = [...html.matchAll(/\b(?:src|href|data-region)="(\/console\/[^"]*)"/g)].map((m) => m[1]!);
    assert.ok(refs.length >= 3, `the page names its files: ${refs.join(' ')}`);
    for (const ref of new Set(refs)) {
      assert.equal((await raw(at, ref)).status, 200, ref);
      assert.ok(assets.includes(ref.slice('/console/'.length)), `${ref} is in the manifest`);
    }
  });

  test('HEAD / answers like GET without a body', async () => {
    const res = await raw(at, '/', {}, 'HEAD');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.body.length, 0);
  });

  test('every built file is served plain, as br and as gzip, immutable, with its content type', async () => {
    for (const name of assets) {
      const plain = readFileSync(join(CONSOLE_DIR, name));
      const entry = manifest.files.find((f) => f.name === name)!;
      assert.equal(plain.length, entry.bytes, `${name}: manifest bytes`);
      const ext = name.slice(name.lastIndexOf('.'));
      const type = CONTENT_TYPES[ext];
      assert.ok(type, `a known type for ${name}`);

      const none = await raw(at, `/console/${name}`);
      assert.equal(none.status, 200, name);
      assert.equal(none.headers['content-encoding'], undefined, `${name}: plain without accept-encoding`);
      assert.ok(none.body.equals(plain), `${name}: plain bytes`);

      const br = await raw(at, `/console/${name}`, { 'accept-encoding': 'br' });
      assert.equal(br.status, 200, name);
      assert.equal(br.headers['content-encoding'], 'br', name);
      assert.ok(brotliDecompressSync(br.body).equals(plain), `${name}: br decodes to the file`);

      const gz = await raw(at, `/console/${name}`, { 'accept-encoding': 'gzip' });
      assert.equal(gz.status, 200, name);
      assert.equal(gz.headers['content-encoding'], 'gzip', name);
      assert.ok(gunzipSync(gz.body).equals(plain), `${name}: gzip decodes to the file`);

      for (const r of [none, br, gz]) {
        assert.match(String(r.headers['content-type']), type, `${name}: ${r.headers['content-type']}`);
        assert.match(String(r.headers['cache-control']), /\bimmutable\b/, `${name}: ${r.headers['cache-control']}`);
        assert.match(String(r.headers['cache-control']), /\bmax-age=31536000\b/, `${name}: ${r.headers['cache-control']}`);
        assert.equal(r.headers['x-content-type-options'], 'nosniff', name);
      }
      // One URL, three bodies: a shared cache must key them by Accept-Encoding.
      assert.match(String(br.headers.vary), /accept-encoding/i, `${name}: vary ${br.headers.vary}`);
    }
  });

  test('unknown files and index.html are 404 under /console/, and traversal never reaches package.json', async () => {
    assertError(asInjected(await raw(at, '/console/nope.js')), 404, CODES.NO_ENDPOINT.code);
    const index = await raw(at, '/console/index.html');
    assert.equal(index.status, 404);
    assert.ok(!index.body.includes('<script'), 'the page is not served under /console/');
    const indexBr = await raw(at, '/console/index.html', { 'accept-encoding': 'br, gzip' });
    assert.equal(indexBr.status, 404, 'nor when a compressed form is accepted');

    for (const path of [
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/../../package.json',
      '/console/%2e%2e/%2e%2e/package.json',
      '/console/..%2f..%2fpackage.json',
      '/console/%2e%2e%2f%2e%2e%2fpackage.json',
      '/console/..%5c..%5cpackage.json',
    ]) {
      const res = await raw(at, path);
      assert.ok(res.status >= 400 && res.status < 500, `${path}: ${res.status}`);
      const text = res.body.toString('utf8');
      assert.ok(!text.includes('"name": "forecastd"'), `${path} leaked package.json`);
      assert.ok(!text.includes('Forecast delivery server'), `${path} leaked package.json`);
    }
  });

  test('the page is not served under /console/ in its precompressed files either', async () => {
    // They hold the page with its mark unfilled, and would be cached for a year under a name without a hash.
    for (const name of ['index.html.br', 'index.html.gz']) {
      const res = await raw(at, `/console/${name}`);
      assert.equal(res.status, 404, `GET /console/${name}: ${res.status} ${res.headers['content-type']}`);
    }
  });

  test('POST / is 405 with Allow, not 404 or 500', async () => {
    const res = await raw(at, '/', { 'content-type': 'application/json' }, 'POST');
    assertError(asInjected(res), 405, CODES.METHOD_NOT_ALLOWED.code);
    assert.match(String(res.headers.allow), /\bGET\b/);
  });
});

describe('the console with keys required', () => {
  let at = '';
  let key = '';
  before(async () => {
    at = await serve({ access: { auth: 'required', defaultRate: 1000, defaultBurst: 1000, authFailBurst: 1000 } });
    key = await createKey(store, 'console-key');
    // The key works: the door is live and guarding.
    const ok = await eventually(() => raw(at, '/api/v1/farms', bearer(key)), (r) => r.status === 200, 3000);
    assert.equal(ok.status, 200);
  });

  test('the page and its files need no key, the API still does', async () => {
    const page = await raw(at, '/');
    assert.equal(page.status, 200);
    assert.ok(page.body.equals(pageFor('required')), 'the page, marked as wanting a key');
    const js = await raw(at, `/console/${jsFile}`, { 'accept-encoding': 'br' });
    assert.equal(js.status, 200);
    assert.equal(js.headers['content-encoding'], 'br');
    for (const name of assets) assert.equal((await raw(at, `/console/${name}`)).status, 200, name);

    const api = await raw(at, '/api/v1/farms');
    assertError(asInjected(api), 401, CODES.UNAUTHORIZED.code);
    assert.ok(!api.body.toString('utf8').includes('WF_A'));
  });

  test('a path that only starts under /console/ does not open the API', async () => {
    for (const path of ['/console/../api/v1/farms', '/console/%2e%2e/api/v1/farms', '/console/..%2fapi%2fv1%2ffarms']) {
      const res = await raw(at, path);
      assert.ok(res.status >= 400 && res.status < 500, `${path}: ${res.status}`);
      assert.ok(!res.body.toString('utf8').includes('WF_A'), `${path} served farm data without a key`);
    }
  });
});

describe('consoleRoutes on a folder without a built page', () => {
  test('returns false, registers nothing, and GET / is 404', async () => {
    const tmp = tempDir('forecastd-console-');
    try {
      writeFileSync(join(tmp.dir, 'app-0000000000.js'), 'export {};\n');
      const app: FastifyInstance = Fastify();
      assert.equal(await consoleRoutes(app, () => false, tmp.dir + '/'), false);
      const at = await listenBare(app);
      assert.equal((await raw(at, '/')).status, 404);
      assert.equal((await raw(at, '/console/app-0000000000.js')).status, 404, 'no static files either');
    } finally {
      tmp.cleanup();
    }
  });

  test('returns true on a folder with a page, and serves that page', async () => {
    const tmp = tempDir('forecastd-console-');
    try {
      writeFileSync(join(tmp.dir, 'index.html'), '<!doctype html><title>t</title>\n');
      const app: FastifyInstance = Fastify();
      assert.equal(await consoleRoutes(app, () => false, tmp.dir + '/'), true);
      const at = await listenBare(app);
      const res = await raw(at, '/');
      assert.equal(res.status, 200);
      assert.equal(res.body.toString('utf8'), '<!doctype html><title>t</title>\n');
    } finally {
      tmp.cleanup();
    }
  });
});
