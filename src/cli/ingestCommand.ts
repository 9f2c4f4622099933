/** forecastd ingest PATH... */
import { formatFault } from '../ingest/fault.js';
import { ingestPaths } from '../ingest/ingestFiles.js';
import { openStore } from '../store/openStore.js';
import { resolveSettings, type SettingsInput } from '../settings/resolve.js';
import { UsageError } from './usage.js';

export async function ingestCommand(args: string[], input: SettingsInput): Promise<number> {
  const settings = resolveSettings('ingest', args, input, { positionals: true });
  const { positionals } = settings;
  if (positionals.length === 0) throw new UsageError('ingest needs at least one file or folder', 'ingest');
  const store = await openStore(settings.value('db'));
  try {
    const { accepted, rejected } = await ingestPaths(store, positionals, (o) => {
      if (o.ok) process.stdout.write(`ingested ${o.file}: farm ${o.farmId}, issue ${o.issue}, ${o.records} records\n`);
      else process.stderr.write(formatFault(o.file, o.fault) + '\n');
    });
    process.stdout.write(`${accepted} file${accepted === 1 ? '' : 's'} ingested, ${rejected} rejected\n`);
    return rejected > 0 ? 1 : 0;
  } finally {
    await store.close();
  }
}
