/** forecastd serve: wires options -> store -> app, listens, and shuts down cleanly. */
import { parseArgs } from 'node:util';
import { parseRange, type RangeBox } from '../domain/geo.js';
import { DEFAULT_MATCH_RADIUS_KM, DEFAULT_RANGE } from '../domain/limits.js';
import { buildApp } from '../http/app.js';
import { openStore } from '../store/openStore.js';
import { dbOption, dbUrl, intOption, numberOption, version } from './config.js';
import { UsageError } from './usage.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export async function serveCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...dbOption,
      port: { type: 'string' },
      host: { type: 'string' },
      range: { type: 'string' },
      'match-radius-km': { type: 'string' },
      'log-level': { type: 'string' },
    },
    allowPositionals: false,
    strict: true,
  });
  void positionals;
  const port = intOption('port', values.port, 8080, 0, 65535);
  const host = values.host ?? '127.0.0.1';
  let range: RangeBox = DEFAULT_RANGE;
  if (values.range !== undefined) {
    try {
      range = parseRange(values.range);
    } catch (err) {
      throw new UsageError((err as Error).message, 'serve');
    }
  }
  const matchRadiusKm = numberOption('match-radius-km', values['match-radius-km'], DEFAULT_MATCH_RADIUS_KM, 0);
  const level = values['log-level'] ?? 'warn';
  if (!LOG_LEVELS.includes(level)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`, 'serve');

  const store = await openStore(dbUrl(values.db));
  const app = await buildApp(
    { store, rules: { range, matchRadiusKm }, version: version() },
    { logger: { level, stream: process.stderr } },
  );
  let address: string;
  try {
    address = await app.listen({ port, host });
  } catch (err) {
    await store.close();
    throw err;
  }
  process.stdout.write(`listening on ${address}\n`);

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string): void => {
      if (stopping) return;
      stopping = true;
      app.log.info({ signal }, 'draining and shutting down');
      app
        .close()
        .then(() => store.close())
        .then(
          () => resolve(0),
          (err: unknown) => {
            process.stderr.write(`forecastd: shutdown failed: ${String(err)}\n`);
            resolve(1);
          },
        );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
