/** Failed store calls are counted, whoever makes them; the interface's refusals and successes are not. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { countingStore } from '../../src/ops/countingStore.js';
import { StoreUnavailableError, UnknownFarmError, type Store } from '../../src/store/store.js';
import { runCsv, seed, testStore } from '../helpers/fixtures.js';
import { readRunCsv } from '../../src/ingest/runCsv.js';

let store: Store;
let cleanup: () => Promise<void>;

before(async () => {
  ({ store, cleanup } = await testStore());
  await seed(store, [{ farmId: 'WF_A', issue: '2026112000', opts: { steps: [0, 1] } }]);
});
after(() => cleanup?.());

describe('countingStore', () => {
  test('answers as the store does, properties and listeners included', async () => {
    let errors = 0;
    const counted = countingStore(store, () => errors++);
    assert.equal(counted.changePollMs, store.changePollMs);
    assert.equal(await counted.countFarms(), await store.countFarms());
    assert.equal((await counted.getRun('WF_A', '2026112000'))?.issue, '2026112000');
    let commits = 0;
    const off = counted.onCommit(() => commits++);
    const run = readRunCsv('WF_A_2026112012.csv', Buffer.from(runCsv('2026112012', { steps: [0] })));
    await counted.putRun({ farmId: run.farmId, issue: run.issue, series: run.series });
    off();
    assert.ok(commits >= 1);
    assert.equal(counted.countRuns, counted.countRuns, 'one wrapper per method');
    assert.equal(errors, 0);
  });

  test('a refusal of the interface is not an error; a failure is, and is passed on as it was', async () => {
    let errors = 0;
    const counted = countingStore(store, () => errors++);
    const run = readRunCsv('NOPE_2026112000.csv', Buffer.from(runCsv('2026112000', { steps: [0] })));
    await assert.rejects(counted.putRun({ farmId: run.farmId, issue: run.issue, series: run.series }), UnknownFarmError);
    assert.equal(errors, 0);
    const failing = countingStore(
      new Proxy(store, {
        get: (t, p) => (p === 'ping' ? () => Promise.reject(new StoreUnavailableError('down')) : p === 'countFarms' ? () => { throw new Error('sync'); } : Reflect.get(t, p, t)),
      }),
      () => errors++,
    );
    await assert.rejects(failing.ping(), StoreUnavailableError);
    assert.throws(() => failing.countFarms(), /sync/);
    assert.equal(errors, 2);
  });
});
