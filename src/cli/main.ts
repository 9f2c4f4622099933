/**
 * Entry point of the command line: dispatches to one command, maps errors to
 * exit statuses. The one place that reads the process environment: it hands it
 * to the command, which resolves its settings from it (src/settings/).
 */
import { readTextFile } from '../settings/files.js';
import type { CommandName } from '../settings/definitions.js';
import type { SettingsInput } from '../settings/resolve.js';
import { version } from './config.js';
import { helpText, SettingError, UsageError } from './usage.js';

export type Command = (args: string[], input: SettingsInput) => Promise<number>;

// Loaded on demand: a command pays only for the modules it uses.
const COMMANDS: Record<CommandName, () => Promise<Command>> = {
  serve: async () => (await import('./serveCommand.js')).serveCommand,
  ingest: async () => (await import('./ingestCommand.js')).ingestCommand,
  farms: async () => (await import('./farmsCommand.js')).farmsCommand,
  demo: async () => (await import('./demoCommand.js')).demoCommand,
  'migrate-store': async () => (await import('./migrateStoreCommand.js')).migrateStoreCommand,
  config: async () => (await import('./configCommand.js')).configCommand,
  keys: async () => (await import('./keysCommand.js')).keysCommand,
  status: async () => (await import('./statusCommand.js')).statusCommand,
  prune: async () => (await import('./pruneCommand.js')).pruneCommand,
  webhooks: async () => (await import('./webhooksCommand.js')).webhooksCommand,
};

const isCommand = (name: string): name is CommandName => Object.prototype.hasOwnProperty.call(COMMANDS, name);
const wantsHelp = (args: readonly string[]): boolean => args.includes('--help') || args.includes('-h');

/**
 * A reader of the output that goes away (`forecastd ingest DIR | head -1`) ends what is written there, not
 * the command: an ingest goes on taking its files and exits by what it took and rejected. Without a listener
 * the closed pipe's error would end the process in the middle of its work.
 */
function outliveClosedPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
    });
  }
}

/** Runs the command line; resolves to the exit status. */
export async function main(argv: string[]): Promise<number> {
  outliveClosedPipes();
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(helpText('main'));
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`forecastd ${version()}\n`);
    return 0;
  }
  if (!isCommand(command)) {
    process.stderr.write(`forecastd: unknown command "${command}"\n\n${helpText('main')}`);
    return 2;
  }
  if (wantsHelp(rest)) {
    process.stdout.write(helpText(command));
    return 0;
  }
  try {
    return await (await COMMANDS[command]())(rest, { env: process.env, readFile: readTextFile });
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    // A setting's fault is one line that names the setting and its source; other usage errors point at the help.
    const hint = err instanceof SettingError ? '' : `Try "forecastd ${command} --help".\n`;
    process.stderr.write(`forecastd ${command}: ${err.message}\n${hint}`);
    return 2;
  }
}
