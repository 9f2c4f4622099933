/** Entry point of the command line: dispatches to one command, maps errors to exit statuses. */
import { version } from './config.js';
import { HELP, UsageError } from './usage.js';

type Command = (args: string[]) => Promise<number>;

// Loaded on demand: a command pays only for the modules it uses.
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serveCommand.js')).serveCommand,
  ingest: async () => (await import('./ingestCommand.js')).ingestCommand,
  farms: async () => (await import('./farmsCommand.js')).farmsCommand,
  demo: async () => (await import('./demoCommand.js')).demoCommand,
  'migrate-store': async () => (await import('./migrateStoreCommand.js')).migrateStoreCommand,
};

const wantsHelp = (args: readonly string[]): boolean => args.includes('--help') || args.includes('-h');

/** Runs the command line; resolves to the exit status. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP.main!);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`forecastd ${version()}\n`);
    return 0;
  }
  const load = COMMANDS[command];
  if (!load) {
    process.stderr.write(`forecastd: unknown command "${command}"\n\n${HELP.main}`);
    return 2;
  }
  if (wantsHelp(rest)) {
    process.stdout.write(HELP[command]!);
    return 0;
  }
  try {
    return await (await load())(rest);
  } catch (err) {
    const usage = err instanceof UsageError || (err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS');
    if (!usage) throw err;
    process.stderr.write(`forecastd ${command}: ${(err as Error).message}\nTry "forecastd ${command} --help".\n`);
    return 2;
  }
}
