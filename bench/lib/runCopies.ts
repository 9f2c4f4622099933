/**
 * How a forecastd server has read its runs' copies on local disk so far (`forecastd_run_disk_*` of its
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
    atOnce: value(/^forecastd_run_disk_reads_total\{way="at_once"\} (\d+)/m),
    threaded: value(/^forecastd_run_disk_reads_total\{way="threaded"\} (\d+)/m),
    slow: value(/^forecastd_run_disk_slow_reads_total (\d+)/m),
  };
}

/** "  copies: N at once, M threaded, S slow" for a round, or nothing when no copy was read. */
export function copyReadsText(before: CopyReads, after: CopyReads): string {
  const atOnce = after.atOnce - before.atOnce;
  const threaded = after.threaded - before.threaded;
  return atOnce + threaded === 0 ? '' : `  copies: ${atOnce} at once, ${threaded} threaded, ${after.slow - before.slow} slow`;
}
