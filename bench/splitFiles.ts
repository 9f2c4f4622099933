/**
 * The baseline of the ingest benchmark: read every *.csv file of a folder and
 * split it into lines and cells, without validating or storing anything.
 * Usage: node dist/bench/splitFiles.js DIR
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

const dir = process.argv[2]!;
let cells = 0;
for (const name of (await readdir(dir)).filter((n) => n.endsWith('.csv')).sort()) {
  const text = (await readFile(join(dir, name))).toString('utf8');
  for (const line of text.split('\n')) cells += line.split(',').length;
}
process.stdout.write(`${cells}\n`);
