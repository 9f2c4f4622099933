/** Command-line help texts (the options part generated from the settings) and the usage error. */
import type { CommandName } from '../settings/definitions.js';
import { optionsHelp, sourcesNote } from '../settings/help.js';

export { SettingError, UsageError } from '../settings/errors.js';

const MAIN = `forecastd - forecast delivery server

Usage: forecastd <command> [options]

Commands:
  serve          serve the HTTP API (v1.0) over a store
  ingest         ingest run CSV files (<farm_id>_<yyyyMMddHH>.csv) or folders of them
  farms import   register or update sites from a farm registry CSV
  demo           register demo sites and ingest demo runs
  migrate-store  copy every site and run from one store to another (SQLite <-> PostgreSQL)
  config         print the effective settings of serve and where each comes from
  keys           create, list, revoke and roll API keys
  webhooks       add, list, remove and retry webhook endpoints (signed POSTs when a run is complete)
  prune          remove runs older than the retention period
  status         what a store holds: sites, runs, the newest runs, the newest run's age, its size

Options:
  -h, --help     show help (also: forecastd <command> --help)
  -v, --version  show the version

Exit status: 0 all done; 1 some input rejected (the rest was taken), or the
command failed (the store could not be reached); 2 usage error.
`;

/** Each command's help: what it does (intro), its options from the settings, then any closing lines. */
const TEXTS: Record<CommandName, { intro: string; outro?: string }> = {
  webhooks: {
    intro: `Usage: forecastd webhooks add URL [--name NAME] [--farms ID,...] [options]
       forecastd webhooks list [--json] [options]
       forecastd webhooks remove NAME [options]
       forecastd webhooks retry NAME [options]

Endpoints that are called when a run becomes complete or partial for their
sites: a signed POST (Standard Webhooks), retried with growing delays for at
least 24 hours. add prints the endpoint's secret once.
`,
  },
  serve: {
    intro: `Usage: forecastd serve [options]

Serve the HTTP API. Prints "listening on http://HOST:PORT" once it accepts
requests; SIGTERM or SIGINT drains in-flight requests and exits 0.
`,
  },
  ingest: {
    intro: `Usage: forecastd ingest PATH... [options]
       forecastd ingest --watch DIR [--settle 2s] [options]

Ingest run files. PATH is a file or a folder searched recursively for *.csv.
Each file is taken whole or not at all; re-ingesting a (site, run) replaces it
atomically. A rejected file gets one line on stderr: FILE: line L, column C: fault
(line 0 means the file as a whole). The other files are still taken.

With --watch, runs until SIGTERM or SIGINT and takes every *.csv put into DIR
or its subfolders once it has stood still for --settle, then moves it to
DIR/done/<yyyy-mm-dd>/ or DIR/rejected/ (with NAME.error.txt). Several watchers
may share DIR; each file is taken once, also across a crash. SIGTERM finishes
the file in hand and exits 0.
`,
    outro: 'Exit status: 0 all files taken; 1 some rejected; 2 usage error.\n',
  },
  farms: {
    intro: `Usage: forecastd farms import FILE [options]

Register or update sites (by farm_id) from a farm registry CSV with header
farm_id,lat,lon,name and optional further columns. The file is taken whole or
not at all.
`,
    outro: 'Exit status: 0 imported; 1 rejected; 2 usage error.\n',
  },
  demo: {
    intro: `Usage: forecastd demo [options]

Register 24 demo wind and solar sites across northern and western China and
ingest their last runs (00 and 12 UTC before now), written as CSV files in the
delivery format and ingested through the ordinary ingest path.
`,
  },
  'migrate-store': {
    intro: `Usage: forecastd migrate-store --from URL --to URL

Copy every site and every run from one store to another: sqlite:PATH or
postgres://... on either side. Runs keep their encoded series (byte for byte)
and their publication time; the destination gives them new revisions. Each run
is read back from the destination and one line per (site, run) is printed:
FARM ISSUE from SHA256 to SHA256 (MISMATCH when they differ). Progress goes to
stderr about once a second. Running it again updates what is there.
`,
    outro: 'Exit status: 0 copied and verified; 1 a checksum differed; 2 usage error.\n',
  },
  prune: {
    intro: `Usage: forecastd prune [--retention-days N] [--events-keep DURATION] [--dry-run] [options]

Remove the runs issued longer ago than the retention period (default 30 days),
but never a site's newest run, and give the space back (SQLite: the file
shrinks; PostgreSQL: the space is reused). Prints each removed run as
"FARM ISSUE", then a summary on stderr. Also drops event-log entries older than
--events-keep (default 24h; not in a dry run). serve does the same at start and hourly.
`,
    outro: 'Exit status: 0 done; 1 the store could not be read or changed; 2 usage error.\n',
  },
  keys: {
    intro: `Usage: forecastd keys create --name NAME [--farms ID,ID,...] [--rate R] [--burst B] [--admin]
       forecastd keys list [--json]
       forecastd keys revoke NAME
       forecastd keys roll NAME [--grace DURATION]

API keys. create and roll print the new key alone on one line of stdout, once:
it is never shown again (the store keeps only its SHA-256). A key scoped with
--farms sees only those sites; without --rate / --burst it takes the server's
defaults at request time. roll gives a new key with the same attributes; the old
one keeps working until the grace ends (default 24h, at most 7d, 0 at once).
A running server sees every change within 2 s.
`,
    outro: 'Exit status: 0 done; 1 refused (a name in use, no such live key) or the store could not be reached; 2 usage error.\n',
  },
  status: {
    intro: `Usage: forecastd status [--db URL] [--json]

Print what the store holds: sites, runs, the newest runs with their states and
site counts, how old the newest complete run is (now minus its issue time), and
the store's size (SQLite: the file and its write-ahead log; PostgreSQL: the
database). --json prints {"sites", "runs", "site_runs", "latest_run_age_seconds",
"latest_complete_issue", "latest_runs": [{"issue", "issue_time_utc", "status",
"farms", "farms_expected"}], "store": {"kind", "bytes"}}.
`,
  },
  config: {
    intro: `Usage: forecastd config [--config FILE] [--json] [serve options]

Print the settings serve would run with, one line each: name, value and where
the value comes from (default, file, env or flag). Passwords inside URLs and
secret settings are printed as ***; a setting that is unset prints (unset),
and null with --json.
`,
  },
};

function commandHelp(command: CommandName): string {
  const { intro, outro } = TEXTS[command];
  return `${intro}\nOptions:\n${optionsHelp(command)}\n${sourcesNote(command)}${outro === undefined ? '' : `\n${outro}`}`;
}

/** The help of the program (`main`) and of each command. */
export function helpText(topic: 'main' | CommandName): string {
  return topic === 'main' ? MAIN : commandHelp(topic);
}
