#!/usr/bin/env -S node --single-threaded-gc --no-allocation-site-pretenuring --max-semi-space-size=4
// --single-threaded-gc: V8's garbage collector works on the serving thread
// instead of handing marking and scavenging to helper threads. A serve process
// shares its core with the other workers (or is pinned to one), so helper
// threads only wait for time slices there; measured with `npm run bench`, the
// flag cut CPU per request by 14 % (hot) and 10 % (mixed) and the mixed p99 by
// a fifth (docs/performance.md).
// --no-allocation-site-pretenuring: V8 no longer decides, from how many objects
// of an allocation site survived while the server warmed up, to allocate that
// site's objects straight into the old generation. In some runs it decided so
// for sites of objects that live for one answer, and a mixed load then
// promoted megabytes per scavenge (7-8 ms pauses) and collected the old space
// every second or two: 121 against 97-101 µs per mixed answer, p99 16.5
// against 6.4 ms, peak RSS 273 against 136-141 MB (docs/performance.md).
// --max-semi-space-size=4 (MB, V8's default is 16): a young generation of 12
// instead of 48 MB. What lives longer than an answer sits in the caches, whose
// size --cache-mb sets; the rest dies young, so the larger young generation
// bought no CPU and cost its size in every process: at 10,000 sites, peak RSS
// 446 and 470 against 500 and 504 MB over hot then mixed load, CPU per answer
// within the runs' noise (docs/performance.md).
// Cluster workers inherit all three. Started as `node bin/forecastd.js`, they
// are not applied.
import { main } from '../dist/src/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => {
    process.stderr.write(`forecastd: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
