/**
 * forecastd webhooks add | list | remove | retry (INTERFACE.md section 14):
 * endpoints in the store. `add` prints the endpoint's new secret once, alone on
 * its line of stdout; messages go to stderr. A running serve picks up every
 * change (it reads the endpoints as it follows the event log, and looks for
 * due deliveries every second).
 */
import { Deliverer } from '../events/webhooks/deliverer.js';
import { newSecret } from '../events/webhooks/signature.js';
import { openStore } from '../store/openStore.js';
import { WebhookNameTakenError, type WebhookSummary } from '../store/store.js';
import { resolveSettings, type Resolved, type SettingsInput } from '../settings/resolve.js';
import { checkName, unregisteredSites } from './names.js';
import { UsageError } from './usage.js';

/** Names an endpoint in lists and logs, as a key's name: printable, no separators. */
const MAX_URL_LENGTH = 2000;

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function listed(w: WebhookSummary) {
  return {
    name: w.name,
    url: w.url,
    farms: w.farms ?? 'all',
    created: iso(w.createdAt),
    last_attempt: iso(w.lastAttemptAt),
    last_result: w.lastResult,
    pending: w.pending,
    state: w.disabledAt === null ? 'active' : 'disabled',
    disabled_at: iso(w.disabledAt),
    disabled_reason: w.disabledReason,
  };
}

/** The URL as stored, or the reason it is refused. */
export function checkWebhookUrl(text: string): { url: URL } | { problem: string } {
  if (text.length > MAX_URL_LENGTH) return { problem: `is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: 'is not a URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: 'must start with http:// or https://' };
  if (url.hostname === '') return { problem: 'names no host' };
  if (url.username !== '' || url.password !== '') return { problem: 'must not hold a user name or password (the signature authenticates the sender)' };
  url.hash = '';
  return { url };
}

/** The name an endpoint gets without --name: its URL's host, in the characters a name may hold. */
export function defaultWebhookName(url: URL): string {
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/[^A-Za-z0-9_.@-]/g, '-');
  return host.replace(/^[^A-Za-z0-9]+/, '').slice(0, 64) || 'webhook';
}

function onlyFor(settings: Resolved, sub: string, allowed: readonly string[]): void {
  for (const [name, s] of settings.settings) {
    if (s.source === 'flag' && !['db', 'config', ...allowed].includes(name)) {
      throw new UsageError(`webhooks ${sub} does not take --${name}`, 'webhooks');
    }
  }
}

/** How long `webhooks retry` leaves what it made due to a running server (which looks once a second) before sending it itself. */
const SERVER_PICKUP_MS = 2500;

const say = (text: string): boolean => process.stderr.write(`forecastd webhooks: ${text}\n`);

export async function webhooksCommand(args: string[], input: SettingsInput): Promise<number> {
  const settings = resolveSettings('webhooks', args, input, { positionals: true });
  const [sub, ...rest] = settings.positionals;
  if (sub === 'list') {
    if (rest.length > 0) throw new UsageError('webhooks list takes no further arguments', 'webhooks');
  } else if (sub === 'add') {
    if (rest.length !== 1) throw new UsageError('webhooks add needs exactly one URL', 'webhooks');
  } else if (sub === 'remove' || sub === 'retry') {
    if (rest.length !== 1) throw new UsageError(`webhooks ${sub} needs exactly one NAME`, 'webhooks');
  } else {
    throw new UsageError(sub === undefined ? 'webhooks needs a subcommand: add, list, remove or retry' : `unknown webhooks subcommand "${sub}"`, 'webhooks');
  }
  onlyFor(settings, sub, { add: ['name', 'farms'], list: ['json'], remove: [], retry: ['webhook-allow-private'] }[sub]);

  let url: URL | undefined;
  let name: string | undefined;
  if (sub === 'add') {
    const checked = checkWebhookUrl(rest[0]!);
    if ('problem' in checked) throw new UsageError(`the URL "${rest[0]!.slice(0, 80)}" ${checked.problem}`, 'webhooks');
    url = checked.url;
    name = settings.value('name') ?? defaultWebhookName(url);
  } else if (sub !== 'list') {
    name = rest[0]!;
  }
  checkName(name, 'webhook', 'webhooks');

  // An endpoint may be added before the store is first served (it makes the store); the rest need a store.
  const store = await openStore(settings.value('db'), { existing: sub !== 'add' });
  try {
    const now = Date.now();
    switch (sub) {
      case 'add': {
        const farms = settings.value('farms') ?? null;
        const unregistered = await unregisteredSites(store, farms);
        if (unregistered !== undefined) {
          say(unregistered);
          return 1;
        }
        const secret = newSecret();
        // A name made from the host is made unique (desk.example, desk.example-2, ...): two endpoints of one
        // receiver are common. A name given with --name is the operator's and is never changed.
        const given = settings.value('name') !== undefined;
        for (let k = 1; ; k++) {
          const tried = k === 1 ? name! : `${name!.slice(0, 60)}-${k}`;
          try {
            await store.addWebhook({ name: tried, url: url!.href, secret, farms }, now);
            name = tried;
            break;
          } catch (err) {
            if (!(err instanceof WebhookNameTakenError)) throw err;
            if (given || k >= 100) {
              say(`a webhook is already named "${tried}"; remove it or choose another name with --name`);
              return 1;
            }
          }
        }
        process.stdout.write(secret + '\n');
        process.stderr.write(
          `added webhook "${name}" for ${farms === null ? 'every site' : farms.join(',')}: ${url!.href}\n` +
            `its signing secret is shown once: keep it now\n`,
        );
        return 0;
      }
      case 'list': {
        const hooks = (await store.listWebhooks()).map(listed);
        if (settings.value('json')) {
          process.stdout.write(JSON.stringify(hooks, null, 1) + '\n');
          return 0;
        }
        const header = ['NAME', 'URL', 'FARMS', 'LAST ATTEMPT', 'RESULT', 'PENDING', 'STATE'];
        const rows: string[][] = hooks.map((w) => [
          w.name,
          w.url,
          typeof w.farms === 'string' ? w.farms : w.farms.join(','),
          w.last_attempt ?? '-',
          w.last_result ?? '-',
          String(w.pending),
          w.state === 'active' ? 'active' : `disabled (${w.disabled_reason ?? 'no reason'})`,
        ]);
        const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
        for (const r of [header, ...rows]) process.stdout.write(r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd() + '\n');
        return 0;
      }
      case 'remove': {
        if (!(await store.removeWebhook(name!))) {
          say(`no webhook is named "${name}"`);
          return 1;
        }
        process.stderr.write(`removed webhook "${name}" and its pending deliveries\n`);
        return 0;
      }
      default: {
        const n = await store.retryWebhook(name!, now);
        if (n === undefined) {
          say(`no webhook is named "${name}"`);
          return 1;
        }
        const hook = (await store.listWebhooks()).find((w) => w.name === name);
        if (hook?.disabledAt != null) {
          say(`webhook "${name}" is disabled (${hook.disabledReason ?? 'no reason'}): nothing is sent to it; remove it and add it again to send again`);
          return 1;
        }
        if (n === 0) {
          process.stderr.write(`webhook "${name}" has no pending deliveries\n`);
          return 0;
        }
        // A running server finds them due at its next look (within a second or two); when none has tried them
        // meanwhile, none is running, and they are sent from here. What else is due by now goes with them; a
        // deliverer elsewhere takes none twice (leases).
        const state = async (): Promise<{ pending: number; lastAttemptAt: number | null; lastResult: string | null }> => {
          const w = (await store.listWebhooks()).find((x) => x.name === name);
          return { pending: w?.pending ?? 0, lastAttemptAt: w?.lastAttemptAt ?? null, lastResult: w?.lastResult ?? null };
        };
        const handled = (s: { pending: number; lastAttemptAt: number | null }): boolean => s.pending < n || s.lastAttemptAt !== hook?.lastAttemptAt;
        let after = await state();
        for (const until = Date.now() + SERVER_PICKUP_MS; !handled(after) && Date.now() < until; ) {
          await new Promise((r) => setTimeout(r, 100));
          after = await state();
        }
        let by = 'a running server';
        if (!handled(after)) {
          by = 'this command';
          // The deliverer's own lines start "webhooks: ", which say() already does.
          const tell = (_fields: object, msg: string): void => void say(msg.replace(/^webhooks: /, ''));
          const deliverer = new Deliverer(store, { allowPrivate: settings.value('webhook-allow-private'), log: { info: () => undefined, warn: tell, error: tell } });
          await deliverer.deliverDue();
          after = await state();
        }
        const left = after.pending;
        process.stderr.write(
          `${n} pending ${n === 1 ? 'delivery' : 'deliveries'} of webhook "${name}" sent by ${by}: ${n - left} delivered` +
            (left > 0 ? `, ${left} still pending (last result: ${after.lastResult ?? 'none'}; tried again later)` : '') +
            '\n',
        );
        return 0;
      }
    }
  } finally {
    await store.close();
  }
}
