/**
 * Answers queued with sendAtTurnEnd over a real node:http server: written when
 * the turn's I/O is done, never later than a full batch, every one of them even
 * when another cannot be written.
 */
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { MAX_BATCH, MAX_BATCH_BYTES, sendAtTurnEnd } from '../../src/http/turnBatch.js';

let server: Server;
let port: number;
/** Responses held by the server until a test has as many as it asked for. */
let held: ServerResponse[] = [];
let wanted = 0;
let gotAll: (rs: ServerResponse[]) => void = () => undefined;

before(async () => {
  server = createServer({ keepAlive: false }, (_req: IncomingMessage, res: ServerResponse) => {
    held.push(res);
    if (held.length === wanted) gotAll(held);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

after(() => new Promise<void>((r) => server.close(() => r())));

interface Reply {
  status: number;
  body: string;
  /** The answer's header names and values in the order sent. */
  raw?: string[];
  error?: string;
}

function get(): Promise<Reply> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body, raw: res.rawHeaders }));
      res.on('error', (e) => resolve({ status: res.statusCode!, body, error: e.message }));
    });
    req.on('error', (e) => resolve({ status: 0, body: '', error: e.message }));
    req.end();
  });
}

/** Sends n requests and waits until the server holds all n responses, unanswered. */
async function hold(n: number): Promise<{ responses: ServerResponse[]; replies: Promise<Reply[]> }> {
  held = [];
  wanted = n;
  const responses = new Promise<ServerResponse[]>((r) => (gotAll = r));
  const replies = Promise.all(Array.from({ length: n }, () => get()));
  return { responses: await responses, replies };
}

const headers = (body: Buffer): string[] => ['content-type', 'text/plain', 'content-length', String(body.length)];
const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

test('an answer is written when the turn ends, not when it is queued', async () => {
  const { responses, replies } = await hold(3);
  responses.forEach((res, i) => {
    const body = Buffer.from(`answer ${i}`);
    sendAtTurnEnd(res, 200, headers(body), undefined, body, undefined);
  });
  assert.deepEqual(
    responses.map((r) => r.headersSent),
    [false, false, false],
    'queued answers are not yet written',
  );
  await nextTurn();
  assert.deepEqual(
    responses.map((r) => r.writableEnded),
    [true, true, true],
  );
  assert.deepEqual(
    (await replies).map((r) => [r.status, r.body]),
    [0, 1, 2].map((i) => [200, `answer ${i}`]),
  );
});

test('the answers of 32 clients made in one turn are written together (one wake-up of their reader)', async () => {
  const { responses, replies } = await hold(32);
  const writtenBefore: number[] = [];
  for (const [i, res] of responses.entries()) {
    writtenBefore.push(responses.filter((r) => r.headersSent).length);
    const body = Buffer.from(`answer ${i}`);
    sendAtTurnEnd(res, 200, headers(body), undefined, body, undefined);
  }
  assert.deepEqual(writtenBefore, Array<number>(32).fill(0), 'no answer is written while the others of the turn are made');
  await nextTurn();
  assert.ok(responses.every((r) => r.writableEnded));
  assert.equal((await replies).length, 32);
});

test('a full batch is written at once: no answer waits for more than MAX_BATCH - 1 others', async () => {
  const n = MAX_BATCH + 3;
  const { responses, replies } = await hold(n);
  const sentWhenQueued: boolean[] = [];
  responses.forEach((res, i) => {
    const body = Buffer.from(`answer ${i}`);
    sendAtTurnEnd(res, 200, headers(body), undefined, body, undefined);
    sentWhenQueued.push(res.headersSent);
  });
  // The MAX_BATCH-th queued answer writes the batch; the three after it wait for the turn's end.
  assert.deepEqual(
    responses.map((r) => r.headersSent),
    [...Array<boolean>(MAX_BATCH).fill(true), false, false, false],
  );
  assert.equal(sentWhenQueued[MAX_BATCH - 1], true);
  assert.equal(sentWhenQueued[MAX_BATCH - 2], false);
  await nextTurn();
  assert.ok(responses.every((r) => r.writableEnded));
  const got = await replies;
  assert.deepEqual(
    got.map((r) => r.body),
    responses.map((_, i) => `answer ${i}`),
  );
});

test('queued bodies of MAX_BATCH_BYTES are written at once', async () => {
  const { responses, replies } = await hold(3);
  const half = Buffer.alloc(MAX_BATCH_BYTES / 2, 'x');
  sendAtTurnEnd(responses[0]!, 200, headers(half), undefined, half, undefined);
  assert.equal(responses[0]!.headersSent, false);
  sendAtTurnEnd(responses[1]!, 200, headers(half), undefined, half, undefined);
  assert.deepEqual(
    responses.slice(0, 2).map((r) => r.headersSent),
    [true, true],
    'the second half reached the bound',
  );
  const small = Buffer.from('small');
  sendAtTurnEnd(responses[2]!, 200, headers(small), undefined, small, undefined);
  assert.equal(responses[2]!.headersSent, false, 'the count of bytes starts again after a flush');
  await nextTurn();
  assert.deepEqual(
    (await replies).map((r) => r.body.length),
    [half.length, half.length, 5],
  );
});

test('a pooled body is handed back once, after its answer was written', async () => {
  const { responses, replies } = await hold(2);
  const released: string[] = [];
  responses.forEach((res, i) => {
    const body = Buffer.from(`pooled ${i}`);
    sendAtTurnEnd(res, 200, headers(body), undefined, body, () => released.push(`${i} ${res.writableEnded}`));
  });
  assert.deepEqual(released, [], 'nothing is handed back before it is sent');
  await nextTurn();
  await replies;
  await nextTurn();
  assert.deepEqual(released.sort(), ['0 true', '1 true']);
});

test('an answer that cannot be written closes its connection; the rest of the batch is sent and the process stays up', async () => {
  const { responses, replies } = await hold(3);
  responses.forEach((res, i) => {
    const body = Buffer.from(`answer ${i}`);
    // A header value with a line break is refused by node:http's writeHead.
    const h = i === 1 ? [...headers(body), 'x-broken', 'a\r\nb'] : headers(body);
    sendAtTurnEnd(res, 200, h, undefined, body, undefined);
  });
  await nextTurn();
  const got = await replies;
  assert.deepEqual([got[0]!.status, got[0]!.body], [200, 'answer 0']);
  assert.deepEqual([got[2]!.status, got[2]!.body], [200, 'answer 2']);
  assert.ok(got[1]!.error !== undefined, 'the broken answer ends in a closed connection');
  assert.equal(got[1]!.body, '');
});

test("an answer's further headers (the caller's rate limit) follow its own, the list given left as it was", async () => {
  const { responses, replies } = await hold(1);
  const body = Buffer.from('limited');
  const own = headers(body);
  const kept = [...own];
  sendAtTurnEnd(responses[0]!, 200, own, ['ratelimit', '"default";r=9;t=1'], body, undefined);
  await nextTurn();
  const [got] = await replies;
  const raw = got!.raw!;
  assert.deepEqual(raw.slice(0, 6), ['content-type', 'text/plain', 'content-length', String(body.length), 'ratelimit', '"default";r=9;t=1']);
  assert.deepEqual(own, kept);
});
