/** forecastd ingest PATH... | forecastd ingest --watch DIR */
import { formatFault } from '../ingest/fault.js';
import { formatAccepted, ingestPaths } from '../ingest/ingestFiles.js';
import { openStore } from '../store/openStore.js';
import { resolveSettings, type Resolved, type SettingsInput } from '../settings/resolve.js';
import { watchSettings } from '../settings/serveOptions.js';
import { UsageError } from './usage.js';
import { checkWatchFolder, runWatch } from './watchRunner.js';

export async function ingestCommand(args: string[], input: SettingsInput): Promise<number> {
  const settings = resolveSettings('ingest', args, input, { positionals: true });
  const { positionals } = settings;
  const watch = settings.value('watch');
  // Paths on the command line win over a folder to watch from the environment or a config file.
  if (positionals.length > 0 && watch !== undefined && settings.source('watch') === 'flag') {
    throw new UsageError('ingest takes files and folders or --watch DIR, not both', 'ingest');
  }
  if (positionals.length === 0) {
    if (watch === undefined) throw new UsageError('ingest needs at least one file or folder, or --watch DIR', 'ingest');
    checkWatchFolder(settings);
    return watchUntilSignal(settings);
  }
  const store = await openStore(settings.value('db'));
  try {
    const { accepted, rejected } = await ingestPaths(store, positionals, (o) => {
      if (o.ok) process.stdout.write(formatAccepted(o.file, o.farmId, o.issue, o.records) + '\n');
      else process.stderr.write(formatFault(o.file, o.fault) + '\n');
    }, settings.value('ingest-threads'));
    process.stdout.write(`${accepted} file${accepted === 1 ? '' : 's'} ingested, ${rejected} rejected\n`);
    return rejected > 0 ? 1 : 0;
  } finally {
    await store.close();
  }
}

/** Watches until SIGTERM or SIGINT, then finishes the file in hand and exits 0. */
async function watchUntilSignal(settings: Resolved): Promise<number> {
  const signalled = new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  const store = await openStore(settings.value('db'));
  try {
    const watcher = await runWatch(store, watchSettings(settings)!, {
      onOutcome: (o) => (o.ok ? process.stdout : process.stderr).write(o.line + '\n'),
      onError: (err) => process.stderr.write(`forecastd ingest: ${err instanceof Error ? err.message : String(err)}; trying again\n`),
    });
    await signalled;
    await watcher.stop();
    return 0;
  } finally {
    await store.close();
  }
}
