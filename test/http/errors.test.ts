/** Unknown routes, wrong methods, malformed requests, internal errors and health checks. */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { CODES } from '../../src/domain/errors.js';
import type { Store } from '../../src/store/store.js';
import { seed, testStore, testApp } from '../helpers/fixtures.js';
import { assertError, assertNoLeak, JSON_CT, okData, type InjectResult } from './support.js';

let app: FastifyInstance;
let store: Store;
let cleanup: () => Promise<void>;

const inject = (method: string, url: string): Promise<InjectResult> =>
  app.inject({ method: method as 'GET', url }) as unknown as Promise<InjectResult>;

before(async () => {
  const s = await testStore();
  cleanup = s.cleanup;
  store = s.store;
  await seed(store, [{ farmId: 'WF_A', issue: '2026112000', opts: { steps: [0, 1] } }]);
  app = await testApp(store);
});

after(async () => {
  await app?.close();
  await cleanup?.();
});

describe('unknown routes and methods', () => {
  for (const url of ['/api/v1/nope', '/api/v2/forecast?farm_id=WF_A', '/api/v1', '/api', '/nope', '/console', '/api/v1/forecast/issues/x', '/api/v1/farms/WF_A']) {
    test(`GET ${url} is 404 40400`, async () => {
      assertError(await inject('GET', url), 404, 40400);
    });
  }

  test('an unknown route with an unknown method is still 404 40400', async () => {
    assertError(await inject('POST', '/api/v1/nope'), 404, 40400);
  });

  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    test(`${method} /api/v1/forecast is 405 40500 with Allow`, async () => {
      const res = await inject(method, '/api/v1/forecast?farm_id=WF_A');
      assertError(res, 405, 40500, [method]);
      const allow = String(res.headers.allow ?? '');
      assert.match(allow, /\bGET\b/);
      assert.doesNotMatch(allow, new RegExp(`\\b${method}\\b`));
    });
  }

  for (const url of ['/api/v1/farms', '/api/v1/forecast/issues', '/api/v1/elements']) {
    test(`POST ${url} is 405 40500 with Allow`, async () => {
      const res = await inject('POST', url);
      assertError(res, 405, 40500);
      assert.match(String(res.headers.allow ?? ''), /\bGET\b/);
    });
  }
});

describe('malformed requests', () => {
  for (const qs of ['farm_id=%zz', 'farm_id=%E0%A4%A', 'farm_id=WF_A&elements=t2m%', 'farm_id=%C3%28', '%zz=1&farm_id=WF_A']) {
    test(`malformed percent-encoding in the query (${qs}) is 400 40001`, async () => {
      assertError(await inject('GET', `/api/v1/forecast?${qs}`), 400, 40001);
    });
  }

  test('the message names the parameter with malformed percent-encoding', async () => {
    assertError(await inject('GET', '/api/v1/forecast?farm_id=%zz'), 400, 40001, ['farm_id']);
    assertError(await inject('GET', '/api/v1/farms?size=%E0%A4%A'), 400, 40001, ['size']);
    // A malformed name is quoted as sent, whole, with or without a value.
    assertError(await inject('GET', '/api/v1/forecast?farm_id=WF_A&%zzab'), 400, 40001, ['%zzab']);
    assertError(await inject('GET', '/api/v1/forecast?%zzab=1&farm_id=WF_A'), 400, 40001, ['%zzab']);
  });

  for (const path of ['/api/v1/fore%zzcast', '/api/v1/%E0%A4%A', '/api/%zz/farms']) {
    test(`malformed percent-encoding in the path (${path}) is 400 40001`, async () => {
      assertError(await inject('GET', path), 400, 40001);
    });
  }

  describe('on a listening server', () => {
    let port = 0;
    let server: FastifyInstance;
    before(async () => {
      server = await testApp(store);
      await server.listen({ port: 0, host: '127.0.0.1' });
      const addr = server.server.address();
      assert.ok(addr && typeof addr === 'object');
      port = addr.port;
    });
    after(async () => {
      await server?.close();
    });

    /** Sends raw bytes and reads the whole answer (the server closes the connection). */
    function raw(text: string): Promise<{ status: number; headers: Map<string, string>; body: string }> {
      return new Promise((resolve, reject) => {
        // write, not end: a half-closed client may be dropped before a slower (database-backed) answer is ready.
        const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
        let buf = '';
        socket.setEncoding('utf8');
        socket.setTimeout(5000, () => socket.destroy(new Error('timeout')));
        socket.on('data', (d: string) => (buf += d));
        socket.on('error', reject);
        socket.on('close', () => {
          const sep = buf.indexOf('\r\n\r\n');
          assert.ok(sep > 0, `a full HTTP response: ${JSON.stringify(buf.slice(0, 200))}`);
          const [statusLine, ...lines] = buf.slice(0, sep).split('\r\n');
          const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
          resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: buf.slice(sep + 4) });
        });
      });
    }

    function assertRawEnvelope(res: { status: number; headers: Map<string, string>; body: string }, status: number, code: number): void {
      assert.equal(res.status, status);
      assert.equal(res.headers.get('content-type'), JSON_CT);
      const body = JSON.parse(res.body);
      assert.deepEqual(Object.keys(body), ['code', 'message', 'data']);
      assert.equal(body.code, code);
      if (code === 0) {
        assert.equal(body.message, 'success');
      } else {
        assert.equal(body.data, null);
        assert.match(body.message, /\.$/);
      }
      assertNoLeak(res.body);
    }

    test('a normal raw request is answered (control)', async () => {
      const res = await raw('GET /api/v1/farms?size=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      assertRawEnvelope(res, 200, 0);
      assert.equal(JSON.parse(res.body).data.items.length, 1);
    });

    test('an oversized URL (20 KB) gets an envelope with 40001', async () => {
      const res = await raw(`GET /api/v1/forecast?farm_id=WF_A&x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      assertRawEnvelope(res, 400, 40001);
    });

    test('oversized headers get an envelope with 40001', async () => {
      const res = await raw(
        `GET /api/v1/farms HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'b'.repeat(20_000)}\r\nX-More: ${'c'.repeat(10)}\r\n\r\n`,
      );
      assertRawEnvelope(res, 400, 40001);
    });

    test('a request line that is not HTTP gets an envelope with 40001', async () => {
      const res = await raw('THIS IS NOT HTTP\r\n\r\n');
      assertRawEnvelope(res, 400, 40001);
    });

    test('an HTTP/1.1 request without Host gets an envelope with 40001, nosniff and a request id, and the connection closes', async () => {
      for (const path of ['/api/v1/farms?size=1', '/api/v1/forecast?farm_id=WF_A', '/healthz']) {
        const res = await raw(`GET ${path} HTTP/1.1\r\nAccept: */*\r\n\r\n`);
        assertRawEnvelope(res, 400, 40001);
        assert.match(JSON.parse(res.body).message, /Host/);
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
        assert.equal(res.headers.get('connection'), 'close');
        assert.ok(res.headers.get('x-request-id'));
      }
      // HTTP/1.0 has no Host requirement.
      assertRawEnvelope(await raw('GET /api/v1/farms?size=1 HTTP/1.0\r\n\r\n'), 200, 0);
    });

    test('malformed percent-encoding in the path, through the real parser', async () => {
      const res = await raw('GET /api/v1/fore%zzcast HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      assertRawEnvelope(res, 400, 40001);
    });
  });
});

describe('internal errors', () => {
  const secret = '/var/lib/forecastd/secret.db';
  const failing = (what: keyof Store): Store =>
    new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === what) {
          return async () => {
            const err = new Error(`SQLITE_CORRUPT: database disk image is malformed at ${secret}`);
            throw err;
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });

  test('a store failure is 500 50000 without stack, SQL or path', async () => {
    const broken = await testApp(failing('getRun'));
    try {
      const res = (await broken.inject('/api/v1/forecast?farm_id=WF_A')) as unknown as InjectResult;
      const message = assertError(res, 500, CODES.INTERNAL.code);
      assert.ok(!res.body.includes(secret));
      assert.ok(!message.includes('SQLITE'));
    } finally {
      await broken.close();
    }
    const brokenList = await testApp(failing('listFarms'));
    try {
      const res = (await brokenList.inject('/api/v1/farms')) as unknown as InjectResult;
      assertError(res, 500, 50000);
      assert.ok(!res.body.includes(secret));
    } finally {
      await brokenList.close();
    }
  });

  test('readyz is 503 50300 when the store does not answer', async () => {
    const broken = await testApp(failing('ping'));
    try {
      const res = (await broken.inject('/readyz')) as unknown as InjectResult;
      assertError(res, 503, 50300);
      assert.ok(!res.body.includes(secret));
    } finally {
      await broken.close();
    }
  });
});

describe('health', () => {
  test('/healthz is 200', async () => {
    const res = await inject('GET', '/healthz');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], JSON_CT);
    assert.equal(JSON.parse(res.body).code, 0);
  });

  test('/readyz is 200 while the store answers', async () => {
    const data = okData(await inject('GET', '/readyz'));
    assert.ok(data !== null);
  });
});
