/**
 * How a forecastd server has read its runs' copies on local disk so far (`forecastd_disk_cache_*{cache="run"}` of its
 * /metrics; zeros when it keeps none), and the difference over a measured round as one line of text.
 */
export interface CopyReads {
  readonly atOnce: number;
  readonly threaded: number;
  readonly slow: number;
}

export async function copyReads(base: string): Promise<CopyReads> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const value = (pattern: RegExp): number => Number(pattern.exec(text)?.[1] ?? 0);
  return {
    atOnce: value(/^forecastd_disk_cache_reads_total\{cache="run",way="at_once"\} (\d+)/m),
    threaded: value(/^forecastd_disk_cache_reads_total\{cache="run",way="threaded"\} (\d+)/m),
    slow: value(/^forecastd_disk_cache_slow_reads_total\{cache="run"\} (\d+)/m),
  };
}

/** "  copies: N at once, M threaded, S slow" for a round, or nothing when no copy was read. */
export function copyReadsText(before: CopyReads, after: CopyReads): string {
  const atOnce = after.atOnce - before.atOnce;
  const threaded = after.threaded - before.threaded;
  return atOnce + threaded === 0 ? '' : `  copies: ${atOnce} at once, ${threaded} threaded, ${after.slow - before.slow} slow`;
}
