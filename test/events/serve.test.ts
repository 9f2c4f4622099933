/**
 * Event streams of a real `forecastd serve`: with --workers 2 every worker
 * follows the log itself and every stream hears the same events with the same
 * ids, counted in one scrape; SIGTERM ends open streams at once and the
 * process exits 0 long before the shutdown grace.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { serve } from '../helpers/cli.js';
import { FARMS, testDbUrl } from '../helpers/fixtures.js';
import { openStream, type Stream } from '../helpers/sse.js';
import { ingest } from './support.js';
import { importFarms } from '../helpers/cli.js';

let db = '';
let dir = '';
let drop: () => Promise<void>;

before(async () => {
  const t = await testDbUrl();
  ({ url: db, dir, drop } = t);
  await importFarms(db, dir, FARMS);
});

after(async () => drop?.());

test('with --workers 2 every stream hears the same events with the same ids; SIGTERM ends them and exits 0 promptly', async () => {
  const s = await serve(['--db', db, '--workers', '2', '--shutdown-grace', '20s', '--sse-keepalive', '1s']);
  const streams: Stream[] = [];
  try {
    // Connections are spread over the workers by the primary; several streams reach both.
    for (let i = 0; i < 6; i++) streams.push(await openStream(`${s.base}/api/v1/events`));
    for (const st of streams) assert.equal(st.status, 200);
    const scrape = await (await fetch(`${s.base}/metrics`)).text();
    assert.match(scrape, /^forecastd_sse_clients 6$/m, 'one scrape counts the streams of both workers');
    await ingest(db, dir, [['WF_A', '2026112000'], ['PV_B', '2026112000'], ['WF_C', '2026112000']]);
    const want = (e: readonly { event: string; data: string }[]): boolean =>
      e.some((x) => x.event === 'issue' && JSON.parse(x.data).status === 'complete');
    const heard = await Promise.all(streams.map((st) => st.until(want, 3000)));
    const first = heard[0]!.map((e) => [e.id, e.event, e.data]);
    assert.equal(first.filter(([, ev]) => ev === 'run').length, 3);
    for (const h of heard) assert.deepEqual(h.map((e) => [e.id, e.event, e.data]), first);
    for (const st of streams) assert.deepEqual(st.parser.errors, []);
  } finally {
    const t0 = performance.now();
    const code = await s.stop();
    const ms = performance.now() - t0;
    assert.equal(code, 0, s.stderr());
    assert.ok(ms < 5000, `exited ${Math.round(ms)} ms after SIGTERM, with streams open and a grace of 20 s`);
    await Promise.all(streams.map((st) => st.ended));
  }
});
