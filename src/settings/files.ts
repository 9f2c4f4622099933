/** Reading the config file for resolveSettings. */
import { readFileSync } from 'node:fs';

/** The file's text, or undefined when there is no such file; any other fault is thrown. */
export function readTextFile(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
