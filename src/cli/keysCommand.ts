/**
 * forecastd keys create | list | revoke | roll: API keys in the store. A new
 * key is printed once, alone on its line of stdout; the store keeps only its
 * SHA-256 and display prefix. Messages go to stderr.
 */
import { mintKey } from '../access/keyHash.js';
import { keyState } from '../access/keyState.js';
import { openStore } from '../store/openStore.js';
import { KeyNameTakenError, type StoredKey } from '../store/store.js';
import { resolveSettings, type Resolved, type SettingsInput } from '../settings/resolve.js';
import { checkName, unregisteredSites } from './names.js';
import { UsageError } from './usage.js';

/** Names a key in lists and logs: printable, no separators a list or a log would trip on. */

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function listed(k: StoredKey, now: number) {
  return {
    name: k.name,
    prefix: k.prefix,
    farms: k.farms ?? 'all',
    rate: k.rate ?? 'default',
    burst: k.burst ?? 'default',
    admin: k.admin,
    created: iso(k.createdAt),
    expires: iso(k.expiresAt),
    last_used: iso(k.lastUsedAt),
    state: keyState(k, now),
  };
}

function onlyFor(settings: Resolved, sub: string, allowed: readonly string[]): void {
  for (const [name, s] of settings.settings) {
    if (s.source === 'flag' && !['db', 'config', ...allowed].includes(name)) {
      throw new UsageError(`keys ${sub} does not take --${name}`, 'keys');
    }
  }
}

export async function keysCommand(args: string[], input: SettingsInput): Promise<number> {
  const settings = resolveSettings('keys', args, input, { positionals: true });
  const [sub, ...rest] = settings.positionals;
  const takesName = sub === 'revoke' || sub === 'roll';
  if (sub === 'create' || sub === 'list') {
    if (rest.length > 0) throw new UsageError(`keys ${sub} takes no further arguments`, 'keys');
  } else if (takesName) {
    if (rest.length !== 1) throw new UsageError(`keys ${sub} needs exactly one NAME`, 'keys');
  } else {
    throw new UsageError(sub === undefined ? 'keys needs a subcommand: create, list, revoke or roll' : `unknown keys subcommand "${sub}"`, 'keys');
  }
  onlyFor(settings, sub, { create: ['name', 'farms', 'rate', 'burst', 'admin'], list: ['json'], revoke: [], roll: ['grace'] }[sub]);
  let name: string | undefined;
  if (sub === 'create') {
    name = settings.value('name');
    if (name === undefined) throw new UsageError('keys create needs --name NAME', 'keys');
  } else if (takesName) {
    name = rest[0]!;
  }
  checkName(name, 'key', 'keys');
  // A key may be made before the store is first served (it makes the store); the rest need a store to look at.
  const store = await openStore(settings.value('db'), { existing: sub !== 'create' });
  try {
    const now = Date.now();
    switch (sub) {
      case 'create': {
        // An admin key sees every site (INTERFACE.md section 10): a scope given with --admin would only make
        // `keys list` show one the key does not have.
        const admin = settings.value('admin');
        const farms = admin ? null : (settings.value('farms') ?? null);
        if (admin && settings.value('farms') !== undefined) process.stderr.write('forecastd keys: an admin key sees every site; --farms is not kept\n');
        const unregistered = await unregisteredSites(store, farms);
        if (unregistered !== undefined) {
          process.stderr.write(`forecastd keys: ${unregistered}\n`);
          return 1;
        }
        const minted = mintKey();
        try {
          await store.createKey(
            {
              name: name!,
              hash: minted.hash,
              prefix: minted.prefix,
              farms,
              rate: settings.value('rate') ?? null,
              burst: settings.value('burst') ?? null,
              admin,
            },
            now,
          );
        } catch (err) {
          if (!(err instanceof KeyNameTakenError)) throw err;
          process.stderr.write(`forecastd keys: a live key is already named "${name}"; revoke it or choose another name\n`);
          return 1;
        }
        process.stdout.write(minted.key + '\n');
        process.stderr.write(`created key "${name}" (${minted.prefix}…); it is shown once: keep it now\n`);
        return 0;
      }
      case 'list': {
        const keys = (await store.listKeys()).map((k) => listed(k, now));
        if (settings.value('json')) {
          process.stdout.write(JSON.stringify(keys, null, 1) + '\n');
          return 0;
        }
        const header = ['NAME', 'PREFIX', 'FARMS', 'RATE', 'BURST', 'ADMIN', 'CREATED', 'EXPIRES', 'LAST USED', 'STATE'];
        const rows: string[][] = keys.map((k) => [
          k.name,
          k.prefix,
          typeof k.farms === 'string' ? k.farms : k.farms.join(','),
          String(k.rate),
          String(k.burst),
          k.admin ? 'yes' : 'no',
          k.created ?? '-',
          k.expires ?? '-',
          k.last_used ?? '-',
          k.state,
        ]);
        const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
        for (const r of [header, ...rows]) process.stdout.write(r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd() + '\n');
        return 0;
      }
      case 'revoke': {
        const n = await store.revokeKey(name!, now);
        if (n === 0) {
          process.stderr.write(`forecastd keys: no live key is named "${name}"\n`);
          return 1;
        }
        process.stderr.write(`revoked key "${name}"${n > 1 ? ` (${n} keys of that name)` : ''}\n`);
        return 0;
      }
      default: {
        const grace = settings.value('grace');
        const minted = mintKey();
        const rolled = await store.rollKey(name!, { hash: minted.hash, prefix: minted.prefix }, now + grace, now);
        if (rolled === undefined) {
          process.stderr.write(`forecastd keys: no live key is named "${name}"\n`);
          return 1;
        }
        process.stdout.write(minted.key + '\n');
        process.stderr.write(
          grace === 0
            ? `rolled key "${name}": the old key stopped working; the new one is shown once\n`
            : `rolled key "${name}": the old key works until ${new Date(now + grace).toISOString()}; the new one is shown once\n`,
        );
        return 0;
      }
    }
  } finally {
    await store.close();
  }
}
