/** Keys for tests: minted as the CLI mints them and stored through the store interface. */
import { mintKey } from '../../src/access/keyHash.js';
import type { Store } from '../../src/store/store.js';

export interface KeyOptions {
  farms?: readonly string[] | null;
  rate?: number | null;
  burst?: number | null;
  admin?: boolean;
}

/** Creates a live key named `name` and returns its text. */
export async function createKey(store: Store, name: string, opts: KeyOptions = {}): Promise<string> {
  const minted = mintKey();
  await store.createKey(
    {
      name,
      hash: minted.hash,
      prefix: minted.prefix,
      farms: opts.farms ?? null,
      rate: opts.rate ?? null,
      burst: opts.burst ?? null,
      admin: opts.admin ?? false,
    },
    Date.now(),
  );
  return minted.key;
}

export const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });
