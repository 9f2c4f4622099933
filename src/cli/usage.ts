/** Command-line help texts and the usage error. */
import { DEFAULT_CACHE } from '../http/context.js';
import { PG_DEFAULTS } from '../store/store.js';

export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

const DB = `  --db URL               store: sqlite:PATH (or a bare path) or postgres://...;
                         default $FORECASTD_DB or sqlite:./data/forecastd.db`;

export const HELP: Record<string, string> = {
  main: `forecastd - forecast delivery server

Usage: forecastd <command> [options]

Commands:
  serve          serve the HTTP API (v1.0) over a store
  ingest         ingest run CSV files (<farm_id>_<yyyyMMddHH>.csv) or folders of them
  farms import   register or update sites from a farm registry CSV
  demo           register demo sites and ingest demo runs
  migrate-store  copy every site and run from one store to another (SQLite <-> PostgreSQL)

Options:
  -h, --help     show help (also: forecastd <command> --help)
  -v, --version  show the version

Exit status: 0 all done; 1 some input rejected (the rest was taken); 2 usage error.
`,
  serve: `Usage: forecastd serve [options]

Serve the HTTP API. Prints "listening on http://HOST:PORT" once it accepts
requests; SIGTERM or SIGINT drains in-flight requests and exits 0.

Options:
  --port N               TCP port (default 8080; 0 picks a free one)
  --host ADDR            address to bind (default 127.0.0.1)
${DB}
  --range LON0,LAT0,LON1,LAT1
                         service range box for coordinate queries (default 70,0,140,60)
  --match-radius-km KM   a point is served by the nearest site within this radius (default 5)
  --workers N            processes serving the port (node:cluster; default: the number of cores)
  --series-cache-mb MB   bound of the in-memory cache of runs per process (default ${DEFAULT_CACHE.seriesMb})
  --body-cache-mb MB     bound of the cache of rendered response bodies per process (default ${DEFAULT_CACHE.bodyMb})
  --latest-max-age S     Cache-Control max-age when the latest run is implied (default ${DEFAULT_CACHE.latestMaxAgeS})
  --read-db URL          PostgreSQL read replica for reads (writes and change notices use --db)
  --pg-pool-size N       PostgreSQL connections per process and pool (default ${PG_DEFAULTS.poolSize})
  --pg-connect-timeout-ms MS  give up connecting after this long (default ${PG_DEFAULTS.connectTimeoutMs})
  --pg-statement-timeout-ms MS  cancel a statement after this long (default ${PG_DEFAULTS.statementTimeoutMs})
  --log-level LEVEL      fatal, error, warn, info, debug (default warn); logs go to stderr
  -h, --help             show this help
`,
  ingest: `Usage: forecastd ingest PATH... [options]

Ingest run files. PATH is a file or a folder searched recursively for *.csv.
Each file is taken whole or not at all; re-ingesting a (site, run) replaces it
atomically. A rejected file gets one line on stderr: FILE: line L, column C: fault
(line 0 means the file as a whole). The other files are still taken.

Options:
${DB}
  -h, --help             show this help

Exit status: 0 all files taken; 1 some rejected; 2 usage error.
`,
  farms: `Usage: forecastd farms import FILE [options]

Register or update sites (by farm_id) from a farm registry CSV with header
farm_id,lat,lon,name and optional further columns. The file is taken whole or
not at all.

Options:
${DB}
  -h, --help             show this help

Exit status: 0 imported; 1 rejected; 2 usage error.
`,
  demo: `Usage: forecastd demo [options]

Register 24 demo wind and solar sites across northern and western China and
ingest their last runs (00 and 12 UTC before now), written as CSV files in the
delivery format and ingested through the ordinary ingest path.

Options:
${DB}
  --runs N               how many runs (default 4)
  --seed N               random seed (default 1); the same seed gives the same data
  --out DIR              keep the generated CSV files in DIR (default: a temporary folder, removed)
  --if-empty             do nothing when the store already holds sites
  -h, --help             show this help
`,
  'migrate-store': `Usage: forecastd migrate-store --from URL --to URL

Copy every site and every run from one store to another: sqlite:PATH or
postgres://... on either side. Runs keep their encoded series (byte for byte)
and their publication time; the destination gives them new revisions. Each run
is read back from the destination and one line per (site, run) is printed:
FARM ISSUE from SHA256 to SHA256 (MISMATCH when they differ). Progress goes to
stderr about once a second. Running it again updates what is there.

Options:
  --from URL             the store to copy from
  --to URL               the store to copy into (created and migrated if new)
  -h, --help             show this help

Exit status: 0 copied and verified; 1 a checksum differed; 2 usage error.
`,
};
