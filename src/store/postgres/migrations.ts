/**
 * Versioned schema of the PostgreSQL store, the same tables as the SQLite store
 * (the series blob is bytea with the same encoding, so a store moves between
 * the two by copying rows). Migration i brings version i to i + 1; append, never edit.
 */
export const PG_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE farms (
    farm_id    text PRIMARY KEY,
    lat        double precision NOT NULL,
    lon        double precision NOT NULL,
    name       text NOT NULL,
    extra      text NOT NULL DEFAULT '[]',
    updated_at bigint NOT NULL,
    revision   bigint NOT NULL DEFAULT 0
  );
  CREATE INDEX farms_lat_lon ON farms (lat, lon);
  CREATE INDEX farms_revision ON farms (revision);

  CREATE TABLE runs (
    farm_id      text NOT NULL REFERENCES farms (farm_id),
    issue        text NOT NULL,
    records      integer NOT NULL,
    series       bytea NOT NULL,
    revision     bigint NOT NULL,
    published_at bigint NOT NULL,
    PRIMARY KEY (farm_id, issue)
  );
  CREATE INDEX runs_issue ON runs (issue);
  CREATE INDEX runs_revision ON runs (revision);

  -- One row, updated in every publishing transaction: its row lock orders
  -- publications, so revisions are handed out in commit order.
  CREATE TABLE counters (
    name  text PRIMARY KEY,
    value bigint NOT NULL
  );
  INSERT INTO counters (name, value) VALUES ('revision', 0);
  `,
];
