/** forecastd farms import FILE */
import { parseArgs } from 'node:util';
import { formatFault } from '../ingest/fault.js';
import { importFarmsFile } from '../ingest/ingestFiles.js';
import { openStore } from '../store/openStore.js';
import { dbOption, dbUrl } from './config.js';
import { UsageError } from './usage.js';

export async function farmsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: { ...dbOption }, allowPositionals: true, strict: true });
  const [sub, ...files] = positionals;
  if (sub !== 'import') {
    throw new UsageError(sub === undefined ? 'farms needs a subcommand: import' : `unknown farms subcommand "${sub}"`, 'farms');
  }
  if (files.length !== 1) throw new UsageError('farms import needs exactly one FILE', 'farms');
  const file = files[0]!;
  const store = await openStore(dbUrl(values.db));
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
