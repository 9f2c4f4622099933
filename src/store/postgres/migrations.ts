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
  // 2: API keys, as in the SQLite store's migration 3. A name is unique among live keys only (which
  // depends on the time), so the store checks it inside a transaction that holds the counters row lock.
  `
  CREATE TABLE api_keys (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name         text NOT NULL,
    hash         text NOT NULL,
    prefix       text NOT NULL,
    farms        text,
    rate         double precision CHECK (rate IS NULL OR rate > 0),
    burst        integer CHECK (burst IS NULL OR burst >= 1),
    admin        boolean NOT NULL DEFAULT false,
    created_at   bigint NOT NULL,
    expires_at   bigint,
    revoked_at   bigint,
    last_used_at bigint,
    revision     bigint NOT NULL
  );
  CREATE UNIQUE INDEX api_keys_hash ON api_keys (hash);
  CREATE INDEX api_keys_name ON api_keys (name);
  CREATE INDEX api_keys_revision ON api_keys (revision);
  `,
  // 3: when each (site, run) was first published, as in the SQLite store's migration 4.
  `
  ALTER TABLE runs ADD COLUMN first_published_at bigint;
  UPDATE runs SET first_published_at = published_at;
  `,
  // 4: files taken from a watched folder, as in the SQLite store's migration 5.
  `
  CREATE TABLE ingested_files (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    claim   text NOT NULL UNIQUE,
    path    text NOT NULL,
    size    bigint NOT NULL,
    mtime   bigint NOT NULL,
    sha256  text NOT NULL,
    result  text NOT NULL CHECK (result IN ('taken', 'rejected')),
    message text NOT NULL,
    farm_id text,
    issue   text,
    at      bigint NOT NULL
  );
  CREATE INDEX ingested_files_path ON ingested_files (path);
  `,
  // 5: runs removed by retention, as in the SQLite store's migration 6.
  `
  CREATE TABLE removed_runs (
    farm_id  text NOT NULL,
    issue    text NOT NULL,
    revision bigint NOT NULL
  );
  CREATE INDEX removed_runs_revision ON removed_runs (revision);
  `,
  // 6: events and webhooks, as in the SQLite store's migration 7. Identity values are never reused; the
  // store serialises the inserts into events (an advisory lock held to commit), so ids become visible in
  // increasing order.
  `
  CREATE TABLE events (
    id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind     text NOT NULL CHECK (kind IN ('run', 'tick')),
    farm_id  text,
    issue    text,
    revision bigint,
    at       bigint NOT NULL
  );
  CREATE UNIQUE INDEX events_tick_at ON events (at) WHERE kind = 'tick';
  CREATE INDEX events_at ON events (at);

  CREATE TABLE webhooks (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name            text NOT NULL UNIQUE,
    url             text NOT NULL,
    secret          text NOT NULL,
    farms           text,
    created_at      bigint NOT NULL,
    since_event_id  bigint NOT NULL,
    disabled_at     bigint,
    disabled_reason text
  );

  CREATE TABLE webhook_deliveries (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id      bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    msg_id          text NOT NULL,
    type            text NOT NULL CHECK (type IN ('issue.complete', 'issue.partial')),
    issue           text NOT NULL,
    body            text NOT NULL,
    created_at      bigint NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at bigint NOT NULL,
    last_attempt_at bigint,
    last_detail     text,
    delivered_at    bigint,
    gave_up_at      bigint,
    lease_owner     text,
    lease_until     bigint,
    UNIQUE (webhook_id, msg_id)
  );
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (created_at, id)
    WHERE delivered_at IS NULL AND gave_up_at IS NULL;

  CREATE TABLE marks (
    name  text PRIMARY KEY,
    value bigint NOT NULL
  );
  `,
];
