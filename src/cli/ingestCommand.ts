/** forecastd ingest PATH... */
import { parseArgs } from 'node:util';
import { formatFault } from '../ingest/fault.js';
import { ingestPaths } from '../ingest/ingestFiles.js';
import { openStore } from '../store/openStore.js';
import { dbOption, dbUrl } from './config.js';
import { UsageError } from './usage.js';

export async function ingestCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: { ...dbOption }, allowPositionals: true, strict: true });
  if (positionals.length === 0) throw new UsageError('ingest needs at least one file or folder', 'ingest');
  const store = await openStore(dbUrl(values.db));
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
