/** Picks the store adapter from a store URL (INTERFACE.md section 1). */
import { existsSync } from 'node:fs';
import { openSqliteStore } from './sqlite/sqliteStore.js';
import { PG_DEFAULTS, type Store } from './store.js';

export const DEFAULT_DB = 'sqlite:./data/forecastd.db';

export type StoreLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export function parseStoreUrl(url: string): StoreLocation {
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: 'postgres', url };
  // Any other scheme (a misspelt postgres://, mysql://, file://) is refused rather than taken for a file's path.
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(url) && !url.startsWith('sqlite:')) throw new Error(`--db "${url}" names an unknown kind of store`);
  const path = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : url;
  if (path === '') throw new Error(`--db "${url}" names no file`);
  return { kind: 'sqlite', path };
}

export interface StoreOptions {
  /** PostgreSQL: a read replica for reads. */
  readonly readUrl?: string;
  readonly poolSize?: number;
  readonly connectTimeoutMs?: number;
  readonly statementTimeoutMs?: number;
  /**
   * The store must exist already: for commands that read or look after a store (status, prune, keys list,
   * webhooks list, ...), where a mistyped path would otherwise make an empty store, folders and all, and
   * report on it.
   */
  readonly existing?: boolean;
}

/** Thrown when a store asked for as existing is not there. */
export class NoStoreError extends Error {
  constructor(path: string) {
    super(`no store at ${path}: a store is made by forecastd farms import, ingest, demo or serve`);
    this.name = 'NoStoreError';
  }
}

export async function openStore(url: string, o: StoreOptions = {}): Promise<Store> {
  const loc = parseStoreUrl(url);
  if (loc.kind === 'postgres') {
    // Loaded on demand: the embedded store needs no PostgreSQL client.
    const { openPostgresStore } = await import('./postgres/postgresStore.js');
    return openPostgresStore({
      url: loc.url,
      readUrl: o.readUrl,
      poolSize: o.poolSize ?? PG_DEFAULTS.poolSize,
      connectTimeoutMs: o.connectTimeoutMs ?? PG_DEFAULTS.connectTimeoutMs,
      statementTimeoutMs: o.statementTimeoutMs ?? PG_DEFAULTS.statementTimeoutMs,
    });
  }
  if (o.readUrl !== undefined) throw new Error('--read-db applies to a PostgreSQL store only');
  if (o.existing === true && loc.path !== ':memory:' && !existsSync(loc.path)) throw new NoStoreError(loc.path);
  return openSqliteStore(loc.path);
}
