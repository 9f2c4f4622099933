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
];
