/**
 * The other process of bench:delivery: writes a new run (the next issue after the store's) of every bench
 * site into the store file it is given, one commit per site, as `forecastd ingest` of a delivery does.
 * Usage: node dist/bench/deliveryWriter.js STORE SITES ISSUE_MS
 */
import { benchRun, benchSites } from './lib/benchStore.js';
import { openStore } from '../src/store/openStore.js';

const [path, sites, issueMs] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])];
const store = await openStore(path);
for (const s of benchSites(sites)) await store.putRun(benchRun(s, issueMs));
await store.close();
