/** Picks the store adapter from a store URL (INTERFACE.md section 1). */
import { openSqliteStore } from './sqlite/sqliteStore.js';
import type { Store } from './store.js';

export const DEFAULT_DB = 'sqlite:./data/forecastd.db';

export type StoreLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

export function parseStoreUrl(url: string): StoreLocation {
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: 'postgres', url };
  const path = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : url;
  if (path === '') throw new Error(`--db "${url}" names no file`);
  return { kind: 'sqlite', path };
}

export async function openStore(url: string): Promise<Store> {
  const loc = parseStoreUrl(url);
  if (loc.kind === 'postgres') {
    throw new Error('the PostgreSQL store is not available in this version; use sqlite:PATH');
  }
  return openSqliteStore(loc.path);
}
