/**
 * Every method but GET and HEAD, on every route, whatever the request carries
 * (no body, an empty one, malformed JSON, one over the framework's body limit,
 * an odd content type, a chunked one): 405 / 40500 with Allow, in the envelope,
 * and no framework or runtime identifier in the message. Sent as raw bytes to a
 * listening server, so that Node's own parser sees them as a client sends them.
 */
import assert from 'node:assert/strict';
import { METHODS } from 'node:http';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../src/store/store.js';
import { seed, testApp, testStore } from '../helpers/fixtures.js';
import { JSON_CT } from './support.js';

let app: FastifyInstance;
let store: Store;
let cleanup: () => Promise<void>;
let port = 0;

before(async () => {
  const s = await testStore();
  cleanup = s.cleanup;
  store = s.store;
  await seed(store, [{ farmId: 'WF_A', issue: '2026112000', opts: { steps: [0, 1] } }]);
  app = await testApp(store);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  assert.ok(addr && typeof addr === 'object');
  port = addr.port;
});

after(async () => {
  await app?.close();
  await cleanup?.();
});

interface RawAnswer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/**
 * Sends a request as bytes and reads one answer by its Content-Length, without
 * waiting for the body to be taken: a server may answer before reading it.
 */
function send(head: string, body: Buffer = Buffer.alloc(0)): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (err: Error | null, answer?: RawAnswer): void => {
      if (done) return;
      done = true;
      socket.destroy();
      if (err) reject(err);
      else resolve(answer!);
    };
    socket.setTimeout(10_000, () => finish(new Error(`no answer to ${head.split('\r\n')[0]}`)));
    // The server may close once it has answered, while the body is still being written.
    socket.on('error', (err) => {
      if (!done && !tryParse()) finish(err);
    });
    const tryParse = (): boolean => {
      const sep = buf.indexOf('\r\n\r\n');
      if (sep < 0) return false;
      const [statusLine, ...lines] = buf.subarray(0, sep).toString('latin1').split('\r\n');
      const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      const length = Number(headers.get('content-length') ?? NaN);
      if (!Number.isInteger(length) || buf.length < sep + 4 + length) return false;
      finish(null, { status: Number(statusLine!.split(' ')[1]), headers, body: buf.subarray(sep + 4, sep + 4 + length).toString('utf8') });
      return true;
    };
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      tryParse();
    });
    socket.on('close', () => {
      if (!tryParse()) finish(new Error(`connection closed without a full answer to ${head.split('\r\n')[0]}: ${JSON.stringify(buf.toString('latin1').slice(0, 200))}`));
    });
    socket.write(head);
    if (body.length > 0) socket.write(body, () => undefined);
  });
}

/** No framework or runtime error identifier, no exception class name. */
const INTERNAL_IDENTIFIER = /\bFST_|\bERR_|\bHPE_|[A-Z][A-Za-z]*(?:Error|Exception)\b|\bE[A-Z]{3,}\b/;

function assertMethodNotAllowed(res: RawAnswer, method: string, what: string): void {
  assert.equal(res.status, 405, `${what}: ${res.status} ${res.body}`);
  assert.equal(res.headers.get('content-type'), JSON_CT, what);
  assert.equal(res.headers.get('allow'), 'GET, HEAD', what);
  const body = JSON.parse(res.body) as { code: number; message: string; data: unknown };
  assert.deepEqual(Object.keys(body), ['code', 'message', 'data'], what);
  assert.equal(body.code, 40500, what);
  assert.equal(body.data, null, what);
  assert.match(body.message, /^[A-Z].*\.$/, what);
  assert.ok(body.message.includes(method), `${what}: the message names the method: ${body.message}`);
  assert.doesNotMatch(body.message, INTERNAL_IDENTIFIER, what);
}

const OVERSIZED = Buffer.alloc(2 * 1024 * 1024 + 17, 0x61);

/** What a request may carry, as the head's extra lines and the body. */
const CARRIED: ReadonlyArray<{ name: string; headers: string; body: Buffer }> = [
  { name: 'no body', headers: '', body: Buffer.alloc(0) },
  { name: 'an empty JSON body', headers: 'Content-Type: application/json\r\nContent-Length: 0\r\n', body: Buffer.alloc(0) },
  { name: 'a malformed JSON body', headers: 'Content-Type: application/json\r\nContent-Length: 4\r\n', body: Buffer.from('{bad') },
  {
    name: 'a JSON body over the body limit',
    headers: `Content-Type: application/json\r\nContent-Length: ${OVERSIZED.length}\r\n`,
    body: OVERSIZED,
  },
  {
    name: 'a body of an odd content type',
    headers: 'Content-Type: application/x-odd; charset=koi8-r\r\nContent-Length: 5\r\n',
    body: Buffer.from('\xff\xfe\x00ab', 'latin1'),
  },
  { name: 'a body without a content type', headers: 'Content-Length: 3\r\n', body: Buffer.from('abc') },
  {
    name: 'a chunked form body',
    headers: 'Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n',
    body: Buffer.from('5\r\na=%zz\r\n0\r\n\r\n'),
  },
  {
    name: 'a malformed multipart body',
    headers: 'Content-Type: multipart/form-data; boundary=x\r\nContent-Length: 9\r\n',
    body: Buffer.from('--x\r\nnope'),
  },
];

/** A concrete URL for each registered GET path (a wildcard route gets a file name under it). */
function concrete(path: string): string {
  if (path.endsWith('*')) return path.slice(0, -1) + 'index.html';
  return path === '/api/v1/forecast' ? '/api/v1/forecast?farm_id=WF_A' : path;
}

/** Every method Node's parser admits but GET, HEAD and CONNECT (which Node hands over as a bare socket). */
const OTHER_METHODS = METHODS.filter((m) => m !== 'GET' && m !== 'HEAD' && m !== 'CONNECT');

describe('methods a route does not take', () => {
  test('the routes under test are the registered ones, with the API among them', () => {
    const paths = app.routePaths.list();
    for (const p of ['/api/v1/forecast', '/api/v1/farms', '/api/v1/forecast/issues', '/api/v1/elements', '/api/v1/openapi.json', '/healthz', '/readyz']) {
      assert.ok(paths.includes(p), `${p} is registered: ${paths.join(' ')}`);
    }
  });

  test('every other method, with every kind of body, on every route: 405 / 40500 with Allow', async () => {
    let checked = 0;
    for (const path of app.routePaths.list()) {
      const url = concrete(path);
      for (const method of OTHER_METHODS) {
        for (const c of CARRIED) {
          const res = await send(`${method} ${url} HTTP/1.1\r\nHost: localhost\r\n${c.headers}\r\n`, c.body);
          assertMethodNotAllowed(res, method, `${method} ${url} with ${c.name}`);
          checked++;
        }
      }
    }
    assert.ok(checked >= 7 * OTHER_METHODS.length * CARRIED.length, `${checked} requests checked`);
  });

  test('CONNECT is answered 405 in the envelope, not dropped', async () => {
    const res = await send('CONNECT /api/v1/farms HTTP/1.1\r\nHost: localhost\r\n\r\n');
    assertMethodNotAllowed(res, 'CONNECT', 'CONNECT /api/v1/farms');
  });

  test('a malformed query with another method is still 405 (the method is wrong whatever the query)', async () => {
    const res = await send('POST /api/v1/farms?size=%zz HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 4\r\n\r\n', Buffer.from('{bad'));
    assertMethodNotAllowed(res, 'POST', 'POST with a malformed query');
  });

  test('an unknown path with a malformed body is 404 / 40400, without an identifier', async () => {
    for (const c of CARRIED) {
      const res = await send(`POST /api/v1/nope HTTP/1.1\r\nHost: localhost\r\n${c.headers}\r\n`, c.body);
      assert.equal(res.status, 404, c.name);
      const body = JSON.parse(res.body) as { code: number; message: string };
      assert.equal(body.code, 40400, c.name);
      assert.doesNotMatch(body.message, INTERNAL_IDENTIFIER, c.name);
    }
  });

  test('the connection stays usable after a refused body (the body is not taken for the next request)', async () => {
    const res = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let buf = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => {
        buf += d;
        if ((buf.match(/HTTP\/1\.1 /g) ?? []).length >= 2 && buf.endsWith('}')) {
          socket.destroy();
          resolve(buf);
        }
      });
      socket.on('error', reject);
      socket.setTimeout(5000, () => reject(new Error(`timeout: ${buf}`)));
      socket.write(
        'POST /api/v1/farms HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 4\r\n\r\n{bad' +
          'GET /api/v1/farms?size=1 HTTP/1.1\r\nHost: localhost\r\n\r\n',
      );
    });
    const answers = res.split(/(?=HTTP\/1\.1 )/);
    assert.match(answers[0]!, /^HTTP\/1\.1 405 /);
    assert.match(answers[1]!, /^HTTP\/1\.1 200 /);
    assert.match(answers[1]!, /"code":0/);
  });

  test('GET with a malformed JSON body is served (a GET body is never parsed)', async () => {
    const res = await send('GET /api/v1/farms?size=1 HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 4\r\n\r\n', Buffer.from('{bad'));
    assert.equal(res.status, 200, res.body);
  });
});
