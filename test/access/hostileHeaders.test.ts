/**
 * Random and hostile key headers at every route, sent as raw bytes: repeated,
 * huge, non-ASCII, control-free garbage, near-misses of a real key. Every
 * answer is one of the contract's status / code pairs in a valid envelope,
 * never a 500, and never echoes the key it was sent.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { DEFAULT_RULES, seed, testStore } from '../helpers/fixtures.js';
import { createKey } from '../helpers/keys.js';

let app: FastifyInstance;
let port = 0;
let key = '';
let cleanup: () => Promise<void>;

before(async () => {
  const s = await testStore();
  cleanup = s.cleanup;
  await seed(s.store, [{ farmId: 'WF_A', issue: '2026112000', opts: { steps: [0, 1] } }]);
  key = await createKey(s.store, 'fuzz', { rate: 1e6, burst: 1e6 });
  app = await buildApp({
    store: s.store,
    rules: DEFAULT_RULES,
    version: 'test',
    access: { auth: 'required', authFailRate: 1e6, authFailBurst: 1e6 },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
});

after(async () => {
  await app?.close();
  await cleanup?.();
});

/** The status / code pairs of the contract (a 200 of the API has code 0; docs pages and CSV are not envelopes). */
const PAIRS = new Set(['400/40001', '401/40101', '404/40400', '404/40401', '405/40500', '422/42201', '429/42901', '503/50300']);

interface Raw {
  status: number;
  head: string;
  body: Buffer;
}

/** One request as bytes on its own connection; the answer is read until the server closes or the body is complete. */
function send(bytes: Buffer): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    const done = (): void => {
      const sep = buf.indexOf('\r\n\r\n');
      if (sep < 0) return;
      const head = buf.subarray(0, sep).toString('latin1');
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      const body = buf.subarray(sep + 4);
      if (length && body.length < Number(length[1])) return;
      socket.destroy();
      resolve({ status: Number(head.split(' ')[1]), head, body: length ? body.subarray(0, Number(length[1])) : body });
    };
    socket.setTimeout(5000, () => {
      socket.destroy();
      reject(new Error(`no answer: ${buf.toString('latin1').slice(0, 200)}`));
    });
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      done();
    });
    socket.on('end', done);
    socket.on('error', () => done());
    socket.write(bytes);
  });
}

const ROUTES = [
  '/api/v1/forecast?farm_id=WF_A&size=1',
  '/api/v1/forecast?lat=40.5&lon=95.25&format=csv',
  '/api/v1/farms',
  '/api/v1/forecast/issues',
  '/api/v1/elements',
  '/api/v1/openapi.json',
  '/healthz',
  '/readyz',
  '/metrics',
  '/docs/',
  '/api/v1/nope',
];

/** Header values as a hostile client sends them: bytes of any kind but CR and LF (which end the line). */
const headerValue = fc.oneof(
  fc.constant(''),
  fc.string({ maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.stringMatching(/^[0-9A-Za-z]{0,50}$/).map((s) => `fcd_${s}`),
  fc.nat({ max: 41 }).chain((i) =>
    fc.constantFrom(...'0aZ_ ~é'.split('')).map((c) => () => key.slice(0, i) + c + key.slice(i + 1)),
  ),
  fc.integer({ min: 1000, max: 12000 }).map((n) => 'A'.repeat(n)),
  fc.constant('\u00ff\u00fe\u0000\u0001'),
  fc.constant(() => key),
  fc.constant(() => `${key}, ${key}`),
);

const headerLine = fc.tuple(
  fc.constantFrom('Authorization', 'authorization', 'X-API-Key', 'x-api-key', 'AUTHORIZATION'),
  fc.constantFrom('', 'Bearer ', 'bearer ', 'Basic ', 'Bearer  ', 'Token '),
  headerValue,
);

test('every route answers random and hostile key headers with a defined status and code, never a 500', async () => {
  let sent = 0;
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...ROUTES), fc.array(headerLine, { maxLength: 4 }), async (route, lines) => {
      const texts = lines.map(([name, scheme, value]) => `${name}: ${scheme}${typeof value === 'function' ? value() : value}`.replace(/[\r\n]/g, ''));
      const head = `GET ${route} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${texts.map((t) => t + '\r\n').join('')}\r\n`;
      const res = await send(Buffer.from(head, 'latin1'));
      sent++;
      assert.notEqual(res.status, 500, head.slice(0, 300));
      const json = /\r\ncontent-type: application\/json/i.test(res.head);
      if (res.status === 200 || res.status === 304) return;
      assert.ok(json, `${res.status} without an envelope for ${route}`);
      const body = JSON.parse(res.body.toString('utf8')) as { code: number; message: string; data: unknown };
      assert.deepEqual(Object.keys(body), ['code', 'message', 'data']);
      assert.ok(PAIRS.has(`${res.status}/${body.code}`), `${res.status}/${body.code}`);
      assert.equal(body.data, null);
      assert.ok(!res.body.toString('latin1').includes(key.slice(4, 20)), 'no key text in an answer');
      if (res.status === 401) assert.match(res.head, /\r\nwww-authenticate: Bearer realm="forecastd"/i);
    }),
    { numRuns: 400, seed: 20261125 },
  );
  assert.ok(sent >= 400);
});
