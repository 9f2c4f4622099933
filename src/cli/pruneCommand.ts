/**
 * forecastd prune [--retention-days N] [--events-keep DURATION] [--dry-run]: removes runs past the retention
 * period, and the event log's entries older than events-keep, now.
 */
import { pruneOld } from '../ops/retention.js';
import { openStore } from '../store/openStore.js';
import { resolveSettings, type SettingsInput } from '../settings/resolve.js';

export async function pruneCommand(args: string[], input: SettingsInput): Promise<number> {
  const settings = resolveSettings('prune', args, input);
  const days = settings.value('retention-days');
  const dryRun = settings.value('dry-run');
  const eventsKeepMs = settings.value('events-keep');
  const store = await openStore(settings.value('db'), { existing: true });
  try {
    const removed = await pruneOld(store, days, Date.now(), dryRun, eventsKeepMs);
    for (const r of removed) process.stdout.write(`${r.farmId} ${r.issue}\n`);
    const what = `${removed.length} run${removed.length === 1 ? '' : 's'} of sites`;
    process.stderr.write(
      days === 0
        ? 'retention-days is 0: every run is kept\n'
        : dryRun
          ? `would remove ${what} (issued more than ${days} days ago; each site's newest run is kept)\n`
          : `removed ${what} (issued more than ${days} days ago; each site's newest run is kept)\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}
