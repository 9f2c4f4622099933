/** forecastd status [--db URL] [--json]: what a store holds and how fresh it is (INTERFACE.md section 13). */
import { storeStatus, type StoreStatus } from '../ops/storeStatus.js';
import { openStore } from '../store/openStore.js';
import { resolveSettings, type SettingsInput } from '../settings/resolve.js';
import { UsageError } from './usage.js';

const AGE_UNITS: ReadonlyArray<readonly [string, number]> = [
  ['d', 86_400],
  ['h', 3_600],
  ['m', 60],
  ['s', 1],
];

/** An age as a person reads it: the largest unit and the next (`2d 3h`, `4h 0m`, `37s`). */
export function formatAge(seconds: number): string {
  let rest = Math.max(0, Math.round(seconds));
  const counts = AGE_UNITS.map(([, size]) => {
    const n = Math.floor(rest / size);
    rest -= n * size;
    return n;
  });
  const first = counts.findIndex((n) => n > 0);
  if (first < 0) return '0s';
  return counts
    .slice(first, first + 2)
    .map((n, i) => `${n}${AGE_UNITS[first + i]![0]}`)
    .join(' ');
}

/** Bytes in binary units with one decimal (`12.3 MiB`). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${bytes} B` : `${v.toFixed(1)} ${units[u]}`;
}

function asJson(s: StoreStatus): unknown {
  return {
    sites: s.sites,
    runs: s.runs,
    site_runs: s.siteRuns,
    latest_run_age_seconds: s.latestDone?.ageS ?? null,
    latest_complete_issue: s.latestDone?.issue ?? null,
    latest_runs: s.latestRuns.map((r) => ({
      issue: r.issue,
      issue_time_utc: r.issueTimeUtc,
      status: r.status,
      farms: r.sites,
      farms_expected: r.sitesExpected,
    })),
    store: { kind: s.size.kind, bytes: s.size.bytes },
  };
}

function asText(s: StoreStatus): string {
  const lines = [
    `sites            ${s.sites}`,
    `runs             ${s.runs} (${s.siteRuns} site runs)`,
    `latest run age   ${s.latestDone === undefined ? 'no complete or partial run' : `${formatAge(s.latestDone.ageS)} (${s.latestDone.issue})`}`,
    `store            ${s.size.kind}, ${formatBytes(s.size.bytes)} (${s.size.bytes} bytes)`,
  ];
  if (s.latestRuns.length > 0) {
    lines.push('', 'issue        issue time (UTC)       status       sites');
    for (const r of s.latestRuns) lines.push(`${r.issue}   ${r.issueTimeUtc}   ${r.status.padEnd(10)}   ${r.sites}/${r.sitesExpected}`);
  }
  return lines.join('\n') + '\n';
}

export async function statusCommand(args: string[], input: SettingsInput): Promise<number> {
  const settings = resolveSettings('status', args, input, { positionals: true });
  if (settings.positionals.length > 0) throw new UsageError('status takes no arguments', 'status');
  const url = settings.value('db');
  const store = await openStore(url, { existing: true });
  try {
    const status = await storeStatus(store, url, Date.now(), settings.value('run-deadline'));
    process.stdout.write(settings.value('json') ? JSON.stringify(asJson(status)) + '\n' : asText(status));
    return 0;
  } finally {
    await store.close();
  }
}
