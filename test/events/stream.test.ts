/**
 * GET /api/v1/events on a real server and store, runs ingested by the real CLI
 * in another process: the stream's head, live events within a second, resume
 * by Last-Event-ID (header or query) with exactly the missed events, reset,
 * scopes, keep-alive comments, limits, and a stream outliving the request
 * timeouts.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { openStore } from '../../src/store/openStore.js';
import type { Store } from '../../src/store/store.js';
import { FARMS, testStore } from '../helpers/fixtures.js';
import { mintKey } from '../../src/access/keyHash.js';
import { bearer, createKey } from '../helpers/keys.js';
import { openStream, type Stream } from '../helpers/sse.js';
import { ingest, listen, publish, sleep } from './support.js';
import { importFarms } from '../helpers/cli.js';
import { waitUntil } from '../helpers/watch.js';

let store: Store;
/** Another handle on the same store: its commits reach the server as another process's do (by polling). */
let writer: Store;
let db = '';
let dir = '';
let cleanup: () => Promise<void>;
let app: FastifyInstance;
let base = '';
let all = '';
let onlyA = '';
let limited = '';
const streams: Stream[] = [];

const open = async (path: string, headers: Record<string, string> = {}): Promise<Stream> => {
  const s = await openStream(`${base}${path}`, headers);
  streams.push(s);
  return s;
};

before(async () => {
  const s = await testStore();
  ({ store, url: db, dir, cleanup } = s);
  await importFarms(db, dir, FARMS);
  writer = await openStore(db);
  all = await createKey(store, 'all', { rate: 1000, burst: 1000 });
  onlyA = await createKey(store, 'only-a', { farms: ['WF_A'], rate: 1000, burst: 1000 });
  limited = await createKey(store, 'limited', { rate: 1000, burst: 1000 });
  ({ app, base } = await listen(store, {
    access: { auth: 'required' },
    limits: { requestTimeoutMs: 300, headersTimeoutMs: 200, maxInFlight: 3 },
    events: { keepaliveMs: 100, maxClients: 6, maxClientsPerKey: 3 },
  }));
});

afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await sleep(50);
});

/** Publishes small runs through the other handle, one after the other. */
const put = async (runs: ReadonlyArray<readonly [string, string]>): Promise<void> => {
  for (const [farmId, issue] of runs) await publish(writer, farmId, issue);
};

after(async () => {
  await app?.close();
  await writer?.close();
  await cleanup?.();
});

describe('GET /api/v1/events', () => {
  test('a stream opened before an ingest by the CLI hears the run and issue events within a second', async () => {
    const s = await open('/api/v1/events', { ...bearer(all), 'accept-encoding': 'gzip, br', 'x-request-id': 'sse-test-1' });
    assert.equal(s.status, 200);
    assert.equal(s.headers['content-type'], 'text/event-stream; charset=utf-8');
    assert.equal(s.headers['cache-control'], 'no-cache');
    assert.equal(s.headers['x-accel-buffering'], 'no');
    assert.equal(s.headers['content-encoding'], undefined, 'never compressed');
    assert.equal(s.headers['x-request-id'], 'sse-test-1');
    assert.equal(s.headers['x-content-type-options'], 'nosniff');
    assert.ok(s.headers['ratelimit'], 'the key pays for the stream like any request');
    await ingest(db, dir, [['WF_A', '2026112000'], ['PV_B', '2026112000']]);
    const t0 = performance.now();
    const events = await s.until((e) => e.filter((x) => x.event === 'run').length === 2 && e.some((x) => x.event === 'issue'), 3000);
    const last = events.at(-1)!;
    assert.ok(last.at - t0 < 1000, `the events came ${Math.round(last.at - t0)} ms after the ingest ended`);
    assert.deepEqual(s.parser.errors, []);
    assert.equal(s.parser.order[0], 'retry', 'retry comes first');
    assert.deepEqual(s.parser.retries, [3000]);
    const runs = s.data('run');
    assert.deepEqual(runs.map((r) => r.farm_id).sort(), ['PV_B', 'WF_A']);
    for (const r of runs) {
      assert.deepEqual(Object.keys(r), ['farm_id', 'issue', 'revision', 'published_at']);
      assert.equal(r.issue, '2026112000');
      assert.ok(Number.isInteger(r.revision));
      assert.match(r.published_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+08:00$/);
    }
    const issue = s.data('issue')[0];
    assert.deepEqual(issue, { issue: '2026112000', status: 'receiving', farms: 1, farms_expected: 3 });
    const ids = s.parser.events.map((e) => e.id);
    assert.deepEqual([...ids].sort((a, b) => a - b), ids, 'ids increase');
    assert.equal(new Set(ids).size, ids.length);
  });

  test('a client that reconnects with Last-Event-ID (or ?last_event_id=) gets exactly what it missed, in order', async () => {
    const watcher = await open('/api/v1/events', bearer(all));
    const first = await open('/api/v1/events', bearer(all));
    await put([['WF_C', '2026112000']]);
    await first.until((e) => e.some((x) => x.event === 'issue' && JSON.parse(x.data).status === 'complete'));
    const seen = first.parser.events.at(-1)!.id;
    first.close();
    await put([['WF_A', '2026112012'], ['PV_B', '2026112012'], ['WF_C', '2026112012']]);
    const full = await watcher.until((e) => e.filter((x) => x.event === 'run').length === 4 && e.filter((x) => x.event === 'issue').length >= 3);
    const missed = full.filter((e) => e.id > seen);
    assert.ok(missed.length >= 5, JSON.stringify(missed));
    const expect = missed.map((e) => [e.id, e.event, e.data]);
    for (const headers of [{ 'last-event-id': String(seen) }, {}] as Record<string, string>[]) {
      const path = Object.keys(headers).length > 0 ? '/api/v1/events' : `/api/v1/events?last_event_id=${seen}`;
      const again = await open(path, { ...bearer(all), ...headers });
      assert.equal(again.status, 200);
      const got = await again.until((e) => e.length >= missed.length);
      await sleep(150);
      assert.deepEqual(got.map((e) => [e.id, e.event, e.data]), expect, 'the missed events, none twice, in order');
      assert.deepEqual(again.parser.errors, []);
      again.close();
    }
    // The header wins over the query (an EventSource keeps its URL and sends its newest id).
    const both = await open(`/api/v1/events?last_event_id=${seen}`, { ...bearer(all), 'last-event-id': String(full.at(-1)!.id) });
    await sleep(200);
    assert.deepEqual(both.parser.events, []);
    // The latest issue events say 2026112012 complete and 2026112000 superseded.
    const states = watcher.data('issue').slice(-2);
    assert.deepEqual(states.map((d) => `${d.issue}:${d.status}`).sort(), ['2026112000:superseded', '2026112012:complete']);
  });

  test('a malformed last_event_id is a 400; an id beyond the log or unreadable gets a reset carrying the current position', async () => {
    const bad = await open('/api/v1/events?last_event_id=abc', bearer(all));
    assert.equal(bad.status, 400);
    assert.equal(JSON.parse(await bad.body).code, 40001);
    for (const [id, issue] of [['99999999999', '2026112100'], ['nope', '2026112112']] as const) {
      const s = await open('/api/v1/events', { ...bearer(all), 'last-event-id': id });
      const [reset] = await s.until((e) => e.length >= 1);
      assert.equal(reset!.event, 'reset');
      assert.ok(reset!.id < 99999999999 && reset!.id % 10 === 9, String(reset!.id));
      assert.match(JSON.parse(reset!.data).message, /no longer kept/);
      // Resuming from the reset's id misses nothing and repeats nothing.
      const next = await open('/api/v1/events', { ...bearer(all), 'last-event-id': String(reset!.id) });
      await put([['WF_A', issue]]);
      const got = await next.until((e) => e.some((x) => x.event === 'issue'));
      assert.ok(got.every((e) => e.id > reset!.id));
      s.close();
      next.close();
    }
  });

  test('a scoped key hears only its sites, counted over its sites; a hidden site is never mentioned', async () => {
    const scoped = await open('/api/v1/events', bearer(onlyA));
    const everyone = await open('/api/v1/events', bearer(all));
    await put([['PV_B', '2026112200'], ['WF_C', '2026112200']]);
    await everyone.until((e) => e.filter((x) => x.event === 'run').length === 2);
    await put([['WF_A', '2026112200']]);
    await scoped.until((e) => e.some((x) => x.event === 'issue'));
    await everyone.until((e) => e.some((x) => x.event === 'issue' && JSON.parse(x.data).status === 'complete'));
    assert.deepEqual(scoped.data('run').map((r) => r.farm_id), ['WF_A']);
    const scopedIssues = scoped.data('issue');
    assert.deepEqual(scopedIssues[0], { issue: '2026112200', status: 'complete', farms: 1, farms_expected: 1 });
    for (const e of scoped.parser.events) assert.doesNotMatch(e.data, /PV_B|WF_C/);
    assert.deepEqual(everyone.data('issue').map((d) => `${d.issue}:${d.status}:${d.farms}/${d.farms_expected}`), [
      '2026112200:receiving:1/3',
      '2026112200:complete:3/3',
      '2026112112:superseded:1/3',
      '2026112100:superseded:1/3',
      '2026112012:superseded:3/3',
    ]);
    // Resuming a scoped key from an id of an event it never heard still gives only its own.
    const resumed = await open('/api/v1/events', { ...bearer(onlyA), 'last-event-id': String(everyone.parser.events[0]!.id - 1) });
    await resumed.until((e) => e.some((x) => x.event === 'issue'));
    await sleep(100);
    assert.deepEqual(
      resumed.parser.events.map((e) => [e.id, e.data]),
      scoped.parser.events.map((e) => [e.id, e.data]),
    );
  });

  test('a stream its client closes is counted as an answer (and access-logged as one)', async () => {
    const ops = await createKey(store, 'ops-sse', { admin: true, rate: 1000, burst: 1000 });
    /** Streams answered 200 so far, by /metrics; undefined until the server knows the new admin key. */
    const counted = async (): Promise<number | undefined> => {
      const res = await fetch(`${base}/metrics`, { headers: bearer(ops) });
      const text = await res.text();
      if (res.status !== 200) return undefined;
      return Number(/^forecastd_http_requests_total\{route="\/api\/v1\/events",code="200"\} (\d+)/m.exec(text)?.[1] ?? 0);
    };
    let before: number | undefined;
    await waitUntil(async () => (before = await counted()) !== undefined, 3000);
    const s = await open('/api/v1/events', bearer(all));
    await sleep(150);
    s.close();
    let now: number | undefined;
    await waitUntil(async () => (now = await counted()) === before! + 1, 3000, () => `counted ${now} after ${before}`);
  });

  test('a comment line comes every --sse-keepalive, and a stream outlives the request timeouts', async () => {
    const opened = Date.now();
    const s = await open('/api/v1/events', bearer(all));
    const keepalives = (): number => s.parser.comments.filter((c) => c === 'keep-alive').length;
    // Five at 100 ms take half a second; a loaded machine may delay the timers, so the five may take longer
    // (the default keep-alive of 15 s would send none in that time).
    await waitUntil(() => keepalives() >= 5, 3000, () => String(s.parser.comments.length));
    await sleep(Math.max(0, opened + 750 - Date.now()));
    let ended = false;
    void s.ended.then(() => (ended = true));
    assert.equal(ended, false, 'open after twice the request timeout');
    assert.deepEqual(s.parser.errors, []);
  });

  test('a stream ends within 2 s of its key being revoked, or its grace ending; a key rolled with grace keeps it until then', async () => {
    const revoked = await createKey(store, 'to-revoke', { rate: 1000, burst: 1000 });
    const rolled = await createKey(store, 'to-roll', { rate: 1000, burst: 1000 });
    const kept = await open('/api/v1/events', bearer(all));
    const a = await open('/api/v1/events', bearer(revoked));
    const b = await open('/api/v1/events', bearer(rolled));
    assert.deepEqual([kept.status, a.status, b.status], [200, 200, 200]);
    // Revoked by another handle on the store, as `forecastd keys revoke` in another process does.
    const t0 = performance.now();
    await writer.revokeKey('to-revoke', Date.now());
    await Promise.race([a.ended, sleep(2500).then(() => assert.fail("the revoked key's stream is still open after 2.5 s"))]);
    assert.ok(performance.now() - t0 < 2500);
    // Rolled with 1.5 s of grace: the stream lasts the grace, then ends.
    const next = mintKey();
    const t1 = performance.now();
    await writer.rollKey('to-roll', { hash: next.hash, prefix: next.prefix }, Date.now() + 1500, Date.now());
    await sleep(1000);
    let bEnded = false;
    void b.ended.then(() => (bEnded = true));
    await sleep(10);
    assert.equal(bEnded, false, 'still open within its grace');
    await Promise.race([b.ended, sleep(3000).then(() => assert.fail("the rolled key's stream outlived its grace by 2 s"))]);
    assert.ok(performance.now() - t1 >= 1400);
    // The others go on hearing events.
    await put([['WF_A', '2026112712']]);
    await kept.until((e) => e.some((x) => x.event === 'run' && JSON.parse(x.data).issue === '2026112712'), 3000);
    const again = await fetch(`${base}/api/v1/events`, { headers: bearer(revoked) });
    assert.equal(again.status, 401);
    await again.body?.cancel();
  });

  test('streams do not hold --max-in-flight places; beyond the per-key limit 429 42901, beyond the process limit 503 50300', async () => {
    const mine: Stream[] = [];
    for (let i = 0; i < 3; i++) mine.push(await open('/api/v1/events', bearer(limited)));
    for (const s of mine) assert.equal(s.status, 200);
    const fourth = await open('/api/v1/events', bearer(limited));
    assert.equal(fourth.status, 429);
    assert.equal(fourth.headers['retry-after'], '5');
    assert.equal(JSON.parse(await fourth.body).code, 42901);
    // Requests still pass although three streams are open and --max-in-flight is 3.
    const farms = await fetch(`${base}/api/v1/farms`, { headers: bearer(all) });
    assert.equal(farms.status, 200);
    for (let i = 0; i < 3; i++) assert.equal((await open('/api/v1/events', bearer(all))).status, 200);
    const seventh = await open('/api/v1/events', bearer(onlyA));
    assert.equal(seventh.status, 503);
    assert.equal(seventh.headers['retry-after'], '5');
    assert.equal(JSON.parse(await seventh.body).code, 50300);
    // A stream that closes frees its place, once the server has seen its connection go: until then a new one
    // is still refused for the process's limit.
    mine[0]!.close();
    await waitUntil(async () => {
      const status = (await open('/api/v1/events', bearer(limited))).status;
      if (status !== 200) assert.equal(status, 503);
      return status === 200;
    }, 3000);
    const noKey = await open('/api/v1/events');
    assert.equal(noKey.status, 401);
  });
});

describe('auth auto', () => {
  test('a stream opened while no key was asked for ends within 2 s of the first key', async () => {
    const fresh = await testStore();
    await importFarms(fresh.url, fresh.dir, FARMS);
    const other = await openStore(fresh.url);
    const served = await listen(fresh.store, { access: { auth: 'auto' } });
    try {
      const s = await openStream(`${served.base}/api/v1/events`, {});
      assert.equal(s.status, 200);
      let ended = false;
      void s.ended.then(() => (ended = true));
      await sleep(1200);
      assert.equal(ended, false, 'open while no key exists');
      await createKey(other, 'first');
      await Promise.race([s.ended, sleep(2500).then(() => assert.fail('the keyless stream outlived the first key by 2.5 s'))]);
      s.close();
    } finally {
      await served.app.close();
      await other.close();
      await fresh.cleanup();
    }
  });
});

describe('resuming after the log was pruned', () => {
  test('an id older than what the log keeps gets event: reset, then the live stream', async () => {
    const other = await openStore(db);
    try {
      // Everything but the newest entry is pruned; a server started now keeps nothing older.
      await other.pruneEvents(Date.now() + 60_000);
      const fresh = await listen(store, { access: { auth: 'required' } });
      try {
        // The log's position when the stream opens: another server of this store may add a tick meanwhile.
        const before = await other.eventBounds();
        const s = await openStream(`${fresh.base}/api/v1/events`, { ...bearer(all), 'last-event-id': '10' });
        const [reset] = await s.until((e) => e.length >= 1);
        assert.equal(reset!.event, 'reset');
        const after = await other.eventBounds();
        assert.equal(Number(reset!.id) % 10, 9, 'a position of the log');
        assert.ok(Number(reset!.id) >= before.last * 10 + 9 && Number(reset!.id) <= after.last * 10 + 9, `${reset!.id} within ${before.last}..${after.last}`);
        await put([['WF_C', '2026112300']]);
        const got = await s.until((e) => e.some((x) => x.event === 'run'));
        assert.deepEqual(got.map((e) => e.event).slice(0, 2), ['reset', 'run']);
        s.close();
      } finally {
        await fresh.app.close();
      }
    } finally {
      await other.close();
    }
  });
});

describe('the clock', () => {
  test('a run missing sites turns partial at the first tick after its deadline, and complete when the late site comes', async () => {
    const other = await openStore(db);
    const clocked = await listen(store, { access: { auth: 'required' }, runDeadlineMs: 600, events: { tickMs: 100 } });
    try {
      const s = await openStream(`${clocked.base}/api/v1/events`, bearer(all));
      const first = await publish(other, 'WF_A', '2026113000');
      const partial = (e: readonly { event: string; data: string }[]): boolean =>
        e.some((x) => x.event === 'issue' && x.data.includes('"2026113000"') && JSON.parse(x.data).status === 'partial');
      await s.until(partial, 3000);
      // Judged at a tick, which is written by the clock at or after the moment it names.
      assert.ok(Date.now() >= first.publishedAt + 600, 'not before the deadline');
      const mine = (): any[] => s.data('issue').filter((d) => d.issue === '2026113000');
      assert.deepEqual(mine().map((d) => d.status), ['receiving', 'partial']);
      await publish(other, 'PV_B', '2026113000');
      await publish(other, 'WF_C', '2026113000');
      await s.until((e) => e.some((x) => x.event === 'issue' && x.data.includes('"2026113000"') && JSON.parse(x.data).status === 'complete'));
      assert.deepEqual(mine().map((d) => `${d.issue}:${d.status}:${d.farms}`), [
        '2026113000:receiving:1',
        '2026113000:partial:1',
        '2026113000:complete:3',
      ]);
      s.close();
    } finally {
      await clocked.app.close();
      await other.close();
    }
  });
});
