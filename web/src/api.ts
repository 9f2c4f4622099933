/**
 * The public API as the console calls it: same origin, the person's key in a header, the envelope unwrapped.
 * Answers are kept by URL for the page's life (a run's data does not change under the same ETag often
 * enough to matter, and the views ask again on every change of run or window).
 */
import { storedKey } from './keyStore.js';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export type Params = Record<string, string | number | readonly string[] | undefined>;

/** A URL under this origin with its query; values are percent-encoded, commas in lists kept readable. */
export function apiUrl(path: string, params: Params = {}): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.map(encodeURIComponent).join(',') : encodeURIComponent(String(value));
    parts.push(`${name}=${text}`);
  }
  return parts.length === 0 ? path : `${path}?${parts.join('&')}`;
}

export function authHeaders(): Record<string, string> {
  const key = storedKey();
  return key === undefined ? {} : { authorization: `Bearer ${key}` };
}

const cache = new Map<string, Promise<unknown>>();
const CACHE_ENTRIES = 64;

/** GET one API URL; the envelope's data, or an ApiFailure with the server's message. */
export async function getData<T>(url: string, opts: { fresh?: boolean } = {}): Promise<T> {
  if (opts.fresh !== true) {
    const hit = cache.get(url);
    if (hit !== undefined) return hit as Promise<T>;
  }
  const p = request<T>(url);
  cache.set(url, p);
  if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
  p.catch(() => cache.delete(url));
  return p;
}

/** Forgets every answer: after a key change, what may be seen changes too. */
export function forgetAnswers(): void {
  cache.clear();
}

async function request<T>(url: string): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json', ...authHeaders() } });
  } catch {
    throw new ApiFailure(0, 0, 'The server could not be reached.');
  }
  let body: { code?: number; message?: string; data?: unknown };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    throw new ApiFailure(res.status, 0, `The server answered ${res.status} without a readable body.`);
  }
  if (!res.ok || body.code !== 0) throw new ApiFailure(res.status, body.code ?? 0, body.message ?? `The server answered ${res.status}.`);
  return body.data as T;
}

/** The body of a CSV download, fetched with the key (a plain link cannot send it). */
export async function getCsv(url: string): Promise<Blob> {
  const res = await fetch(url, { headers: { accept: 'text/csv', ...authHeaders() } });
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as { code?: number; message?: string };
    throw new ApiFailure(res.status, body.code ?? 0, body.message ?? `The server answered ${res.status}.`);
  }
  return res.blob();
}

// The API's records, as far as the console reads them.
export interface Farm {
  readonly farm_id: string;
  readonly lat: number;
  readonly lon: number;
  readonly name?: string;
  readonly kind?: string;
  readonly [column: string]: unknown;
}

export interface Run {
  readonly issue: string;
  readonly issue_time_utc: string;
  readonly status: 'receiving' | 'complete' | 'partial' | 'superseded';
  readonly farms: number;
  readonly farms_expected: number;
  readonly available_at: string | null;
  readonly completed_at: string | null;
  readonly updated_at: string | null;
}

export interface Page<T> {
  readonly total: number;
  readonly page: number;
  readonly size: number;
  readonly items: T[];
}

export interface Forecast {
  readonly farm_id: string;
  readonly lat: number;
  readonly lon: number;
  readonly issue_time_utc: string;
  readonly total: number;
  readonly items: ({ date_time: string } & Record<string, number | null | string>)[];
}

/** Every site, page by page (the API gives at most 10,000 a page). */
export async function allFarms(): Promise<Farm[]> {
  const out: Farm[] = [];
  for (let page = 1; ; page++) {
    const p = await getData<Page<Farm>>(apiUrl('/api/v1/farms', { page, size: 10000 }));
    out.push(...p.items);
    if (out.length >= p.total || p.items.length === 0) return out;
  }
}
