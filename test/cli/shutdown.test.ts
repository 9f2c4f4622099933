/**
 * SIGTERM: a request still in flight when the grace ends does not hold the
 * process; it exits 0 within the grace (and promptly when nothing is in flight).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { importFarms, serve } from '../helpers/cli.js';
import { testDbUrl } from '../helpers/fixtures.js';

let db = '';
let drop: () => Promise<void>;

before(async () => {
  const t = await testDbUrl();
  db = t.url;
  drop = t.drop;
  await importFarms(db, t.dir);
});

after(async () => drop?.());

test('a request still arriving when the grace ends is cut off, and the process exits 0 within the grace', async () => {
  const s = await serve(['--db', db, '--workers', '1', '--shutdown-grace', '1s', '--request-timeout', '60s']);
  const { port } = new URL(s.base);
  // A request whose body never finishes arriving: in flight until something closes it.
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.on('error', () => undefined);
  // Read whatever comes, so that the end of the connection is seen.
  socket.resume();
  await new Promise((r) => socket.once('connect', r));
  socket.write('GET /api/v1/farms HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc');
  const closed = new Promise((r) => socket.once('close', r));
  await new Promise((r) => setTimeout(r, 200));
  const t0 = performance.now();
  const code = await s.stop();
  const ms = performance.now() - t0;
  assert.equal(code, 0, s.stderr());
  assert.ok(ms < 6000, `exited after ${ms.toFixed(0)} ms`);
  assert.ok(ms >= 900, `exited after ${ms.toFixed(0)} ms: the request was given its grace`);
  await closed;
});

test('with nothing in flight, SIGTERM exits 0 at once', async () => {
  const s = await serve(['--db', db, '--workers', '1']);
  assert.equal((await fetch(`${s.base}/healthz`)).status, 200);
  const t0 = performance.now();
  assert.equal(await s.stop(), 0);
  assert.ok(performance.now() - t0 < 5000);
});
