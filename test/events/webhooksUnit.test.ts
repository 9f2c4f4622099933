/**
 * Webhooks, the parts without a store: Standard Webhooks signatures (checked
 * against the `standardwebhooks` library), the address classifier, the retry
 * schedule, what an answer counts as, and single POSTs to real local servers
 * (redirects not followed, private addresses refused, timeouts).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { addressKind, type AddressKind } from '../../src/events/webhooks/address.js';
import { outcomeOf, postOnce } from '../../src/events/webhooks/deliverer.js';
import { noticeBody, noticeId } from '../../src/events/webhooks/notifier.js';
import { JITTER_MIN, MAX_ATTEMPTS, nextAttemptAt, PICKUP_MS, RETRY_DELAYS_MS, RETRY_SPAN_MIN_MS } from '../../src/events/webhooks/schedule.js';
import { newSecret, secretKey, sign, signedHeaders } from '../../src/events/webhooks/signature.js';
import { receiver, verified, type Receiver } from '../helpers/webhooks.js';

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;

describe('signature', () => {
  test('a secret is whsec_ + base64 of 32 random bytes, a new one each time', () => {
    const a = newSecret();
    const b = newSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(secretKey(a).length, 32);
    assert.notEqual(a, b);
    assert.throws(() => secretKey('sk_abc'));
  });

  test('the signature is the one the Standard Webhooks library makes, and its verify accepts our headers', () => {
    const secret = newSecret();
    const body = '{"type":"issue.complete","issue":"2026112000","status":"complete","farms":3,"farms_expected":3,"timestamp":"2026-11-20T11:52:30+08:00"}';
    const ts = 1_790_000_000;
    assert.equal(sign(secret, 'msg_1', ts, body), new Webhook(secret).sign('msg_1', new Date(ts * 1000), body));
    const headers = signedHeaders(secret, 'msg_abc', body, Date.now());
    assert.equal(headers['webhook-id'], 'msg_abc');
    assert.match(headers['webhook-timestamp'], /^\d{10}$/);
    assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(new Webhook(secret).verify(body, { ...headers }), JSON.parse(body));
    assert.throws(() => new Webhook(newSecret()).verify(body, { ...headers }), /signature/i);
    assert.throws(() => new Webhook(secret).verify(body + ' ', { ...headers }), /signature/i);
  });

  test('a notice id is derived from (endpoint, run, type) alone; the body is one line with the contract members', () => {
    assert.equal(noticeId(1, '2026112000', 'issue.complete'), noticeId(1, '2026112000', 'issue.complete'));
    assert.match(noticeId(1, '2026112000', 'issue.complete'), /^msg_[0-9a-f]{32}$/);
    const ids = new Set([noticeId(1, '2026112000', 'issue.complete'), noticeId(2, '2026112000', 'issue.complete'), noticeId(1, '2026112012', 'issue.complete'), noticeId(1, '2026112000', 'issue.partial')]);
    assert.equal(ids.size, 4);
    const at = Date.UTC(2026, 10, 20, 3, 52, 30);
    const body = noticeBody('issue.partial', { id: 71, event: 'issue', data: '', issue: '2026112000', status: 'partial', farms: 2, farmsExpected: 3, at });
    assert.equal(body, '{"type":"issue.partial","issue":"2026112000","status":"partial","farms":2,"farms_expected":3,"timestamp":"2026-11-20T11:52:30+08:00"}');
  });
});

describe('address classifier', () => {
  const TABLE: ReadonlyArray<readonly [string, AddressKind]> = [
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['203.0.114.1', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.15.255.255', 'public'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.255', 'cgnat'],
    ['100.63.255.255', 'public'],
    ['100.128.0.1', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2606:4700:4700::1111', 'public'],
    ['2001:4860:4860::8888', 'public'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:100.64.0.1', 'cgnat'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::ffff:8.8.8.8', 'public'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['2002:c0a8:0101::1', 'private'],
    ['2002:0808:0808::1', 'public'],
    ['localhost', 'not an address'],
    ['1.2.3', 'not an address'],
    ['', 'not an address'],
  ];
  for (const [ip, kind] of TABLE) {
    test(`${ip || '(empty)'} is ${kind}`, () => assert.equal(addressKind(ip), kind));
  }
});

describe('retry schedule', () => {
  test('the default table: the first three retries within 10 s, 1 min, 5 min; then 30 min, 2 h, 5 h, 10 h ...', () => {
    assert.deepEqual(RETRY_DELAYS_MS, [10 * S, 1 * MIN, 5 * MIN, 30 * MIN, 2 * H, 5 * H, 10 * H, 10 * H, 10 * H]);
    assert.equal(MAX_ATTEMPTS, 10);
    for (const [i, bound] of [10 * S, 1 * MIN, 5 * MIN].entries()) {
      for (const r of [0, 0.5, 0.999999]) {
        const d = nextAttemptAt(i + 1, 0, { random: () => r })!;
        // Timed a pickup before the bound: a deliverer looking once a second still makes it within the bound.
        assert.ok(d + PICKUP_MS <= bound && d >= (bound - PICKUP_MS) * JITTER_MIN, `retry ${i + 1}: ${d} ms`);
      }
    }
  });

  test('jitter spreads the delays; retries go on for at least 24 h after the first attempt, then give up', () => {
    const spread = new Set(Array.from({ length: 20 }, () => nextAttemptAt(1, 0)));
    assert.ok(spread.size > 5, 'jittered');
    for (const random of [() => 0, () => 0.999999, Math.random]) {
      let t = 0;
      let attempts = 1;
      for (;;) {
        const next = nextAttemptAt(attempts, t, { random });
        if (next === undefined) break;
        assert.ok(next > t);
        t = next;
        attempts++;
      }
      assert.equal(attempts, MAX_ATTEMPTS);
      assert.ok(t >= RETRY_SPAN_MIN_MS, `the last attempt ${(t / H).toFixed(1)} h after the first`);
      assert.ok(t <= 40 * H);
    }
    assert.equal(nextAttemptAt(MAX_ATTEMPTS, 0), undefined);
  });

  test('a scale shortens every delay (tests only)', () => {
    const d = nextAttemptAt(1, 1000, { random: () => 0.999999, scale: 0.01 })!;
    assert.ok(d - 1000 <= 100 && d - 1000 >= 0.8 * (10_000 - PICKUP_MS) * 0.01);
  });

  test('what an answer counts as', () => {
    const at = 1_790_000_000_000;
    assert.deepEqual(outcomeOf({ attempts: 0 }, { kind: 'answered', status: 200 }, at), { outcome: { result: 'delivered', detail: '200', at }, result: 'delivered' });
    assert.equal(outcomeOf({ attempts: 0 }, { kind: 'answered', status: 299 }, at)!.result, 'delivered');
    assert.deepEqual(outcomeOf({ attempts: 3 }, { kind: 'answered', status: 410 }, at), { outcome: { result: 'gone', detail: '410', at }, result: 'gone' });
    const redirect = outcomeOf({ attempts: 0 }, { kind: 'answered', status: 302 }, at)!;
    assert.equal(redirect.outcome.result, 'retry');
    assert.equal(redirect.outcome.detail, 'redirect refused (302)');
    assert.ok(redirect.outcome.nextAttemptAt! - at <= 10 * S);
    assert.equal(outcomeOf({ attempts: 1 }, { kind: 'answered', status: 500 }, at)!.outcome.detail, '500');
    assert.ok(outcomeOf({ attempts: 1 }, { kind: 'answered', status: 500 }, at)!.outcome.nextAttemptAt! - at <= MIN);
    const refused = outcomeOf({ attempts: 0 }, { kind: 'refused', detail: 'private address refused: 10.0.0.1 (private)' }, at)!;
    assert.equal(refused.outcome.result, 'retry');
    assert.equal(refused.result, 'refused');
    assert.equal(outcomeOf({ attempts: MAX_ATTEMPTS - 1 }, { kind: 'failed', detail: 'timeout' }, at)!.outcome.result, 'gave-up');
    assert.equal(outcomeOf({ attempts: 0 }, { kind: 'abandoned' }, at), undefined);
  });
});

describe('one POST', () => {
  let target: Receiver;
  let other: Receiver;
  let silent: http.Server;
  let silentPort = 0;
  before(async () => {
    target = await receiver();
    other = await receiver();
    silent = http.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    silentPort = (silent.address() as AddressInfo).port;
  });
  after(async () => {
    await target.close();
    await other.close();
    silent.closeAllConnections();
    await new Promise((r) => silent.close(r));
  });
  const never = new AbortController().signal;
  const secret = newSecret();
  const body = '{"type":"issue.complete"}';
  const headers = () => ({ ...signedHeaders(secret, 'msg_x', body, Date.now()) });

  test('a 2xx is answered; the request is signed JSON', async () => {
    const r = await postOnce(`${target.url}/hook`, headers(), body, { allowPrivate: true, timeoutMs: 5000, signal: never });
    assert.deepEqual(r, { kind: 'answered', status: 204 });
    const got = target.received.at(-1)!;
    assert.equal(got.headers['content-type'], 'application/json');
    assert.deepEqual(verified(secret, got), { type: 'issue.complete' });
  });

  test('a redirect is not followed', async () => {
    target.answer = (_n, path) => (path === '/moved' ? { status: 302, headers: { location: `${other.url}/elsewhere` } } : { status: 204 });
    const r = await postOnce(`${target.url}/moved`, headers(), body, { allowPrivate: true, timeoutMs: 5000, signal: never });
    assert.deepEqual(r, { kind: 'answered', status: 302 });
    await new Promise((res) => setTimeout(res, 200));
    assert.equal(other.received.length, 0);
  });

  test('loopback and private addresses are refused unless allowed, by literal, by name and in IPv4-mapped form', async () => {
    const before = target.received.length;
    for (const url of [`${target.url}/x`, `http://localhost:${target.port}/x`, `http://[::ffff:127.0.0.1]:${target.port}/x`, `http://10.0.0.1:${target.port}/x`]) {
      const r = await postOnce(url, headers(), body, { allowPrivate: false, timeoutMs: 5000, signal: never });
      assert.equal(r.kind, 'refused', url);
      assert.match((r as { detail: string }).detail, /^private address refused: /);
    }
    assert.equal(target.received.length, before, 'nothing was sent');
    const allowed = await postOnce(`http://localhost:${target.port}/x`, headers(), body, { allowPrivate: true, timeoutMs: 5000, signal: never });
    assert.equal(allowed.kind, 'answered');
  });

  test('no answer within the timeout fails as "timeout"; a closed port as "connection refused"; stopping abandons', async () => {
    const t0 = performance.now();
    assert.deepEqual(await postOnce(`http://127.0.0.1:${silentPort}/`, headers(), body, { allowPrivate: true, timeoutMs: 300, signal: never }), {
      kind: 'failed',
      detail: 'timeout',
    });
    assert.ok(performance.now() - t0 < 2000);
    const closed = await receiver();
    await closed.close();
    assert.deepEqual(await postOnce(`${closed.url}/`, headers(), body, { allowPrivate: true, timeoutMs: 3000, signal: never }), {
      kind: 'failed',
      detail: 'connection refused',
    });
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 100);
    assert.deepEqual(await postOnce(`http://127.0.0.1:${silentPort}/`, headers(), body, { allowPrivate: true, timeoutMs: 5000, signal: stop.signal }), {
      kind: 'abandoned',
    });
  });
});
