/**
 * Versioned schema of the SQLite store. Migration i brings the schema from
 * version i to i + 1 (kept in PRAGMA user_version); append, never edit.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE farms (
    farm_id    TEXT PRIMARY KEY,
    lat        REAL NOT NULL,
    lon        REAL NOT NULL,
    name       TEXT NOT NULL,
    extra      TEXT NOT NULL DEFAULT '[]',
    updated_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX farms_lat_lon ON farms (lat, lon);

  CREATE TABLE runs (
    farm_id      TEXT NOT NULL REFERENCES farms (farm_id),
    issue        TEXT NOT NULL,
    records      INTEGER NOT NULL,
    series       BLOB NOT NULL,
    revision     INTEGER NOT NULL,
    published_at INTEGER NOT NULL,
    PRIMARY KEY (farm_id, issue)
  );
  CREATE INDEX runs_issue ON runs (issue);

  CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
  ) WITHOUT ROWID;
  INSERT INTO counters (name, value) VALUES ('revision', 0);
  `,
  // 2: revisions on farms too, and indexes that let readers fetch what changed since a revision.
  `
  ALTER TABLE farms ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX farms_revision ON farms (revision);
  CREATE INDEX runs_revision ON runs (revision);
  `,
  // 3: API keys. Only the key's SHA-256 and display prefix are kept; the revision comes from the same
  // counter as farms and runs, so one change token tells of them too. A name is unique among live keys
  // only (which depends on the time), so the adapter checks it inside its write transaction.
  `
  CREATE TABLE api_keys (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    hash         TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    farms        TEXT,
    rate         REAL CHECK (rate IS NULL OR rate > 0),
    burst        INTEGER CHECK (burst IS NULL OR burst >= 1),
    admin        INTEGER NOT NULL DEFAULT 0 CHECK (admin IN (0, 1)),
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER,
    revoked_at   INTEGER,
    last_used_at INTEGER,
    revision     INTEGER NOT NULL
  );
  CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
  CREATE INDEX api_keys_name ON api_keys (name);
  CREATE INDEX api_keys_revision ON api_keys (revision);
  `,
  // 4: when each (site, run) was first published, kept when it is replaced: run states (arrival, completion)
  // are derived from it. Runs stored before have only their last publication; it stands in for the first.
  `
  ALTER TABLE runs ADD COLUMN first_published_at INTEGER;
  UPDATE runs SET first_published_at = published_at;
  `,
  // 5: files taken from a watched folder, one row per delivery (its claim name), written in the same
  // transaction as the run it became, so a watcher restarted after a crash knows what is already done.
  `
  CREATE TABLE ingested_files (
    id      INTEGER PRIMARY KEY,
    claim   TEXT NOT NULL UNIQUE,
    path    TEXT NOT NULL,
    size    INTEGER NOT NULL,
    mtime   INTEGER NOT NULL,
    sha256  TEXT NOT NULL,
    result  TEXT NOT NULL CHECK (result IN ('taken', 'rejected')),
    message TEXT NOT NULL,
    farm_id TEXT,
    issue   TEXT,
    at      INTEGER NOT NULL
  );
  CREATE INDEX ingested_files_path ON ingested_files (path);
  `,
  // 6: runs removed by retention, so that every process's caches learn of the removal through changesSince
  // as they learn of publications (a removal takes a revision like them).
  `
  CREATE TABLE removed_runs (
    farm_id  TEXT NOT NULL,
    issue    TEXT NOT NULL,
    revision INTEGER NOT NULL
  );
  CREATE INDEX removed_runs_revision ON removed_runs (revision);
  `,
  // 7: events and webhooks (INTERFACE.md section 14). The event log's ids never come back after a prune
  // (AUTOINCREMENT), so a client resuming from an id never hears a later entry under an old id; a 'run'
  // entry is written in the transaction of its publication. One tick per moment, whichever process ticks.
  // Endpoints and deliveries (the outbox) never reuse an id either: a delivery of a removed endpoint still
  // in flight cannot be mistaken for a later one. Marks are named integers that only move forward.
  `
  CREATE TABLE events (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    kind     TEXT NOT NULL CHECK (kind IN ('run', 'tick')),
    farm_id  TEXT,
    issue    TEXT,
    revision INTEGER,
    at       INTEGER NOT NULL
  );
  CREATE UNIQUE INDEX events_tick_at ON events (at) WHERE kind = 'tick';
  CREATE INDEX events_at ON events (at);

  CREATE TABLE webhooks (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT NOT NULL UNIQUE,
    url             TEXT NOT NULL,
    secret          TEXT NOT NULL,
    farms           TEXT,
    created_at      INTEGER NOT NULL,
    since_event_id  INTEGER NOT NULL,
    disabled_at     INTEGER,
    disabled_reason TEXT
  );

  CREATE TABLE webhook_deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id      INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    msg_id          TEXT NOT NULL,
    type            TEXT NOT NULL CHECK (type IN ('issue.complete', 'issue.partial')),
    issue           TEXT NOT NULL,
    body            TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_attempt_at INTEGER,
    last_detail     TEXT,
    delivered_at    INTEGER,
    gave_up_at      INTEGER,
    lease_owner     TEXT,
    lease_until     INTEGER,
    UNIQUE (webhook_id, msg_id)
  );
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (created_at, id)
    WHERE delivered_at IS NULL AND gave_up_at IS NULL;

  CREATE TABLE marks (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  // 8: a run's versions and arrival times read from the index by issue, never from the table: a row's
  // revision and publication times come after its series blob, and reading them walks the blob's overflow
  // pages. At 10,000 sites × 2 runs a run list (and each /metrics scrape) took about 1 s on the event loop,
  // a bulk download's plan 0.15 s; from this index 2 and 5 ms (docs/performance.md). About 45 bytes a run.
  `
  DROP INDEX runs_issue;
  CREATE INDEX runs_by_issue ON runs (issue, farm_id, revision, published_at, first_published_at);
  `,
];
