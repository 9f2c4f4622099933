#!/usr/bin/env -S node --single-threaded-gc
// --single-threaded-gc: V8's garbage collector works on the serving thread
// instead of handing marking and scavenging to helper threads. A serve process
// shares its core with the other workers (or is pinned to one), so helper
// threads only wait for time slices there; measured with `npm run bench`, the
// flag cut CPU per request by 14 % (hot) and 10 % (mixed) and the mixed p99 by
// a fifth (docs/performance.md). Cluster workers inherit it. Started as
// `node bin/forecastd.js`, the flag is not applied.
import { main } from '../dist/src/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => {
    process.stderr.write(`forecastd: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
