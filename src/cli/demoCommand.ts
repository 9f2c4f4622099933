/**
 * forecastd demo: writes demo sites and runs as CSV files in the delivery
 * format, then takes them in through the ordinary farms import and ingest path.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALL_ELEMENTS } from '../domain/elementsParam.js';
import { csvFileName, renderCsv } from '../domain/csvFormat.js';
import { SeriesView } from '../domain/seriesView.js';
import { formatIssue } from '../domain/time.js';
import { demoFarmsCsv, DEMO_SITES } from '../demo/sites.js';
import { demoIssues } from '../demo/sites.js';
import { demoSeries } from '../demo/weather.js';
import { formatFault } from '../ingest/fault.js';
import { importFarmsFile, ingestPaths } from '../ingest/ingestFiles.js';
import { openStore } from '../store/openStore.js';
import { resolveSettings, type SettingsInput } from '../settings/resolve.js';

/** Writes the registry and run files into dir; returns the registry file's path. */
export async function writeDemoFiles(dir: string, nowMs: number, runs: number, seed: number): Promise<string> {
  await mkdir(dir, { recursive: true });
  const farmsFile = join(dir, 'farms.csv');
  await writeFile(farmsFile, demoFarmsCsv());
  const runsDir = join(dir, 'runs');
  await mkdir(runsDir, { recursive: true });
  for (const issueMs of demoIssues(nowMs, runs)) {
    const issue = formatIssue(issueMs);
    for (const site of DEMO_SITES) {
      const csv = renderCsv(SeriesView.ofSeries(demoSeries(site, issueMs, seed)), issueMs, ALL_ELEMENTS);
      await writeFile(join(runsDir, csvFileName(site.farmId, issue)), csv);
    }
  }
  return farmsFile;
}

export async function demoCommand(args: string[], input: SettingsInput): Promise<number> {
  const settings = resolveSettings('demo', args, input);
  const runs = settings.value('runs');
  const seed = settings.value('seed');
  const out = settings.value('out');
  const store = await openStore(settings.value('db'));
  try {
    if (settings.value('if-empty') && (await store.countFarms()) > 0) {
      process.stdout.write('demo: the store already holds sites; nothing to do\n');
      return 0;
    }
    const dir = out ?? (await mkdtemp(join(tmpdir(), 'forecastd-demo-')));
    try {
      const farmsFile = await writeDemoFiles(dir, Date.now(), runs, seed);
      const farms = await importFarmsFile(store, farmsFile);
      if (!farms.ok) {
        process.stderr.write(formatFault(farmsFile, farms.fault) + '\n');
        return 1;
      }
      const { accepted, rejected } = await ingestPaths(store, [join(dir, 'runs')], (o) => {
        if (!o.ok) process.stderr.write(formatFault(o.file, o.fault) + '\n');
      });
      process.stdout.write(`demo: ${farms.farms} sites registered, ${accepted} runs ingested, ${rejected} rejected\n`);
      return rejected > 0 ? 1 : 0;
    } finally {
      if (out === undefined) await rm(dir, { recursive: true, force: true });
    }
  } finally {
    await store.close();
  }
}
