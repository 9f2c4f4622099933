import assert from 'node:assert/strict';
import { test } from 'node:test';
import { claimName, parseClaimName } from '../../src/ingest/watchClaims.js';

test('a claim name is one file name that tells the delivered path, size and time, and differs per delivery', () => {
  for (const path of ['WF_A_2026112000.csv', 'a/b/WF_A_2026112000.csv', '100%/x_y/%2F/W_2026112000.csv', 'Ünïcode/风电_2026112000.csv']) {
    const name = claimName(path, 12345, 1_790_000_000_123.75);
    assert.ok(!name.includes('/'), name);
    assert.deepEqual(parseClaimName(name), { path, size: 12345, mtimeMs: 1_790_000_000_123 });
    assert.notEqual(claimName(path, 12345, 1_790_000_000_123), claimName(path, 12345, 1_790_000_000_123));
  }
  assert.equal(parseClaimName('.alive'), undefined);
  assert.equal(parseClaimName('WF_A_2026112000.csv'), undefined);
});

test('a path too long for a file name keeps its base name, its folders as a hash', () => {
  const folders = Array.from({ length: 30 }, (_, i) => `folder-${i}`).join('/');
  const name = claimName(`${folders}/WF_A_2026112000.csv`, 1, 2);
  assert.ok(Buffer.byteLength(name) <= 240);
  const c = parseClaimName(name)!;
  assert.match(c.path, /^~[0-9a-f]{16}\/WF_A_2026112000\.csv$/);
  // The same folders give the same hash; others another.
  assert.equal(parseClaimName(claimName(`${folders}/X_2026112000.csv`, 1, 2))!.path.slice(0, 17), c.path.slice(0, 17));
  assert.notEqual(parseClaimName(claimName(`${folders}x/X_2026112000.csv`, 1, 2))!.path.slice(0, 17), c.path.slice(0, 17));
  // A base name too long on its own keeps its end, whole characters and escapes only.
  const long = `${'风'.repeat(70)}%%_2026112000.csv`;
  const cut = parseClaimName(claimName(long, 1, 2))!;
  assert.ok(long.endsWith(cut.path) && cut.path.length > 20, cut.path);
});
