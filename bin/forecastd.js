#!/usr/bin/env -S node --single-threaded-gc --no-allocation-site-pretenuring
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
// Cluster workers inherit both. Started as `node bin/forecastd.js`, they are
// not applied.
import { main } from '../dist/src/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => {
    process.stderr.write(`forecastd: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
