/** migrate-store: SQLite -> PostgreSQL -> SQLite through the real command line, checksums equal all the way. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCli, serve } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { freshPgDatabase, pgTestOptions } from '../helpers/pg.js';

const options = await pgTestOptions();
let dir: string;
let cleanup: () => void;
let pg: Awaited<ReturnType<typeof freshPgDatabase>>;

before(async () => {
  ({ dir, cleanup } = tempDir());
  if (!options.skip) pg = await freshPgDatabase();
});
after(async () => {
  cleanup();
  if (!options.skip) await pg.drop();
});

/** The checksum lines of a migrate-store run: key -> [from, to]. */
function checksums(stdout: string): Map<string, [string, string]> {
  const out = new Map<string, [string, string]>();
  for (const line of stdout.trim().split('\n')) {
    const m = /^(\S+) (\d{10}) from ([0-9a-f]{64}) to ([0-9a-f]{64})$/.exec(line);
    assert.ok(m, `checksum line: ${line}`);
    out.set(`${m[1]} ${m[2]}`, [m[3]!, m[4]!]);
  }
  return out;
}

test('usage: both stores are required and must differ', async () => {
  assert.equal((await runCli(['migrate-store', '--from', 'sqlite:/tmp/x.db'])).code, 2);
  assert.equal((await runCli(['migrate-store', '--from', 'sqlite:/tmp/x.db', '--to', 'sqlite:/tmp/x.db'])).code, 2);
});

test('SQLite -> PostgreSQL -> SQLite keeps every run byte for byte; all three serve every endpoint alike', options, async () => {
  const first = `sqlite:${join(dir, 'first.db')}`;
  const last = `sqlite:${join(dir, 'last.db')}`;
  const demo = await runCli(['demo', '--db', first, '--runs', '2']);
  assert.equal(demo.code, 0, demo.stderr);

  const there = await runCli(['migrate-store', '--from', first, '--to', pg.url]);
  assert.equal(there.code, 0, there.stderr);
  assert.match(there.stderr, /24 sites, 48 runs, 0 checksum mismatches/);
  const back = await runCli(['migrate-store', '--from', pg.url, '--to', last]);
  assert.equal(back.code, 0, back.stderr);

  const a = checksums(there.stdout);
  const b = checksums(back.stdout);
  assert.equal(a.size, 48);
  assert.deepEqual([...a.keys()], [...b.keys()]);
  for (const [k, [from, to]] of a) {
    assert.equal(from, to, k);
    assert.deepEqual(b.get(k), [from, to], k);
  }

  // PostgreSQL and both SQLite stores answer every endpoint byte for byte alike, publication times included.
  const servers = await Promise.all([first, pg.url, last].map((db) => serve(['--db', db, '--workers', '1'])));
  try {
    const paths = [
      '/api/v1/farms',
      '/api/v1/forecast/issues',
      '/api/v1/forecast/issues?farm_id=WF_GS01&size=1',
      '/api/v1/elements',
      '/api/v1/forecast?farm_id=WF_GS01&size=200',
      '/api/v1/forecast?lat=40.5&lon=95.8&elements=spd100,tr&start=2026-11-20',
      '/api/v1/forecast?farm_id=PV_QH01&format=csv',
      '/api/v1/forecast?farm_id=NOPE',
      '/api/v1/forecast?farm_id=WF_GS01&page=0',
    ];
    for (const path of paths) {
      const answers = await Promise.all(servers.map((s) => fetch(s.base + path)));
      const bodies = await Promise.all(answers.map((r) => r.text()));
      for (let i = 1; i < answers.length; i++) {
        assert.equal(answers[i]!.status, answers[0]!.status, path);
        assert.equal(bodies[i], bodies[0], path);
        for (const h of ['content-type', 'last-modified', 'cache-control', 'content-disposition']) {
          assert.equal(answers[i]!.headers.get(h), answers[0]!.headers.get(h), `${path} ${h}`);
        }
      }
    }
  } finally {
    for (const s of servers) await s.stop();
  }
});
