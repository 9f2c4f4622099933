/**
 * A bounded slowloris on loopback: many connections trickling their request
 * heads a byte at a time are cut off once the headers timeout passes (checked
 * every second, not every 30 s), while other clients are answered meanwhile.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { DEFAULT_RULES, seed, testStore } from '../helpers/fixtures.js';

let app: FastifyInstance;
let port = 0;
let cleanup: () => Promise<void>;
const HEADERS_TIMEOUT_MS = 1500;

before(async () => {
  const s = await testStore();
  cleanup = s.cleanup;
  await seed(s.store, [{ farmId: 'WF_A', issue: '2026112000', opts: { steps: [0, 1] } }]);
  app = await buildApp({
    store: s.store,
    rules: DEFAULT_RULES,
    version: 'test',
    access: { auth: 'off' },
    limits: { headersTimeoutMs: HEADERS_TIMEOUT_MS, requestTimeoutMs: 3000, maxInFlight: 1000 },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
});

after(async () => {
  await app?.close();
  await cleanup?.();
});

/** A connection that sends its request head one byte every `everyMs`, never finishing; resolves when the server closes it. */
function trickle(everyMs: number): { closedAfterMs: Promise<number>; answer: () => string; stop: () => void } {
  const socket = net.connect(port, '127.0.0.1');
  const head = 'GET /api/v1/farms HTTP/1.1\r\nHost: localhost\r\nX-Slow: ' + 'a'.repeat(10_000);
  let i = 0;
  let got = '';
  const t0 = performance.now();
  const timer = setInterval(() => {
    if (socket.writable && i < head.length) socket.write(head[i++]!);
  }, everyMs);
  socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
  socket.on('error', () => undefined);
  const closedAfterMs = new Promise<number>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer);
      resolve(performance.now() - t0);
    }),
  );
  return { closedAfterMs, answer: () => got, stop: () => (clearInterval(timer), socket.destroy()) };
}

test('trickling request heads are cut off after the headers timeout while others are answered', async () => {
  // One request before the attack, so that the client's own first-use cost is not counted as the server's.
  assert.equal((await fetch(`http://127.0.0.1:${port}/api/v1/farms`)).status, 200);
  const slow = Array.from({ length: 60 }, () => trickle(100));
  let cutOff = 0;
  for (const s of slow) void s.closedAfterMs.then(() => cutOff++);
  try {
    // Meanwhile, ordinary requests are answered: every one of them while all 60 trickling
    // connections are still open, not once the headers timeout has cut them off.
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/forecast?farm_id=WF_A&size=1`);
      assert.equal(res.status, 200);
      await res.text();
      assert.equal(cutOff, 0, `ordinary request ${i + 1} was answered only after ${cutOff} trickling connections were cut off`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const closed = await Promise.all(slow.map((s) => s.closedAfterMs));
    // Cut off within the timeout plus the 1 s check interval (and some slack), not 30 s later.
    for (const ms of closed) {
      assert.ok(ms >= HEADERS_TIMEOUT_MS - 50, `closed after ${ms.toFixed(0)} ms: too early`);
      assert.ok(ms < HEADERS_TIMEOUT_MS + 2500, `closed after ${ms.toFixed(0)} ms`);
    }
    // Answered with the envelope before being closed, never a 500.
    const answer = slow[0]!.answer();
    assert.match(answer, /^HTTP\/1\.1 400 /);
    assert.match(answer, /"code":40001/);
  } finally {
    for (const s of slow) s.stop();
  }
});
