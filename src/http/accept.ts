/**
 * Whether an Accept header prefers text/csv over JSON (used when format is not given): a higher weight, or the
 * same weight listed first (a client that lists JSON first and CSV after it wants JSON).
 */
export function prefersCsv(accept: string | undefined): boolean {
  // Without a text/csv entry the answer is no: skip parsing the common "*/*" and "application/json".
  if (!accept || !/csv/i.test(accept)) return false;
  let csv = 0;
  let json = 0;
  let jsonFirst = false;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qp === undefined ? 1 : Number(qp.slice(2));
    if (!Number.isFinite(q)) continue;
    if (type === 'text/csv') csv = Math.max(csv, q);
    else if (type === 'application/json') {
      if (csv === 0 && q > 0) jsonFirst = true;
      json = Math.max(json, q);
    }
  }
  return csv > 0 && (csv > json || (csv === json && !jsonFirst));
}
