/**
 * How much space a store takes, for `forecastd status`: an SQLite store's
 * file with its write-ahead log beside it; a PostgreSQL store's database as
 * pg_database_size reports it. Read beside the store, not through it: the
 * store interface has no business with files or catalogues.
 */
import { stat } from 'node:fs/promises';
import { parseStoreUrl } from '../store/openStore.js';
import { PG_DEFAULTS } from '../store/store.js';

export interface StoreSize {
  readonly kind: 'sqlite' | 'postgres';
  readonly bytes: number;
}

const fileBytes = async (path: string): Promise<number> => (await stat(path).catch(() => undefined))?.size ?? 0;

export async function storeSize(url: string): Promise<StoreSize> {
  const loc = parseStoreUrl(url);
  if (loc.kind === 'sqlite') {
    return { kind: 'sqlite', bytes: (await fileBytes(loc.path)) + (await fileBytes(`${loc.path}-wal`)) };
  }
  // Loaded on demand, as the store does: the embedded store needs no PostgreSQL client.
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: loc.url, connectionTimeoutMillis: PG_DEFAULTS.connectTimeoutMs });
  await client.connect();
  try {
    const r = await client.query<{ bytes: string }>('SELECT pg_database_size(current_database())::text AS bytes');
    return { kind: 'postgres', bytes: Number(r.rows[0]!.bytes) };
  } finally {
    await client.end().catch(() => undefined);
  }
}
