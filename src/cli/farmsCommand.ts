/** forecastd farms import FILE */
import { formatFault } from '../ingest/fault.js';
import { importFarmsFile } from '../ingest/ingestFiles.js';
import { openStore } from '../store/openStore.js';
import { resolveSettings, type SettingsInput } from '../settings/resolve.js';
import { UsageError } from './usage.js';

export async function farmsCommand(args: string[], input: SettingsInput): Promise<number> {
  const settings = resolveSettings('farms', args, input, { positionals: true });
  const [sub, ...files] = settings.positionals;
  if (sub !== 'import') {
    throw new UsageError(sub === undefined ? 'farms needs a subcommand: import' : `unknown farms subcommand "${sub}"`, 'farms');
  }
  if (files.length !== 1) throw new UsageError('farms import needs exactly one FILE', 'farms');
  const file = files[0]!;
  const store = await openStore(settings.value('db'));
  try {
    const r = await importFarmsFile(store, file);
    if (!r.ok) {
      process.stderr.write(formatFault(file, r.fault) + '\n');
      return 1;
    }
    process.stdout.write(`imported ${r.farms} farm${r.farms === 1 ? '' : 's'} from ${file}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
