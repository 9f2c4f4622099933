/**
 * The normalised key of a forecast answer's body: everything that decides its
 * bytes (the site record, the run and its revision, JSON page and size or CSV,
 * the records and the field selection), as a 32-bit hash made at once from
 * numbers and as text made only when a cache is asked. The entity tag and the
 * body cache's doorkeeper use the hash; a one-off answer, which the doorkeeper
 * has not seen, never needs the text (the mixed load of `npm run bench`: 95,799
 * answers in 10 s, none of them found in the body cache).
 */
import type { ForecastPlan } from '../query/forecastQuery.js';
import type { Farm } from '../store/store.js';
import { finishHash, fnv1a, mixInt } from '../cache/hash.js';

/** A site record's part of the key and its hash: its coordinates as text cost two number conversions each time. */
interface SitePart {
  readonly text: string;
  readonly hash: number;
}

/** Per farm record: the read model keeps one per site and replaces it when the site changes, so the entry follows. */
const siteParts = new WeakMap<Farm, SitePart>();

function sitePart(farm: Farm): SitePart {
  let p = siteParts.get(farm);
  if (p === undefined) {
    const text = `${farm.farmId}|${farm.lat}|${farm.lon}`;
    p = { text, hash: fnv1a(text) };
    siteParts.set(farm, p);
  }
  return p;
}

const HOUR_MS = 3_600_000;

export class BodyKey {
  readonly hash: number;
  private made: string | undefined;
  private readonly site: string;
  private readonly issue: string;
  private readonly revision: number;
  /** 0 for CSV (a whole window), else the JSON page size. */
  private readonly size: number;
  private readonly page: number;
  private readonly from: number;
  private readonly to: number;
  private readonly selection: number;

  constructor(plan: ForecastPlan, csv: boolean, page: number, size: number) {
    const { run } = plan;
    const site = sitePart(plan.farm);
    // An index loop: V8 left this for-of as a call of the array iterator per element (0.9 % of a mixed answer).
    const elements = plan.elements;
    let selection = 0;
    for (let i = 0; i < elements.length; i++) selection |= 1 << elements[i]!;
    this.site = site.text;
    this.issue = run.issue;
    this.revision = run.revision;
    this.size = csv ? 0 : size;
    this.page = csv ? 0 : page;
    this.from = plan.from;
    this.to = plan.to;
    this.selection = selection;
    // The issue as whole hours since 1970 (an issue is an hour); the revision's low 32 bits (the tag carries it whole).
    let h = mixInt(mixInt(site.hash, plan.issueMs / HOUR_MS), run.revision);
    h = mixInt(mixInt(h, this.page), this.size);
    this.hash = finishHash(mixInt(mixInt(mixInt(h, plan.from), plan.to), selection));
  }

  /**
   * The key as text, for the caches' maps: made on first use, as one flat string. Built with +, it would be a
   * rope of about fifteen pieces, kept as long as the cache keeps the key: at 10,000 sites with the body cache
   * full, 12 MB of the heap were such pieces.
   */
  get text(): string {
    return (this.made ??= [
      this.size === 0 ? 'csv' : `json|${this.page}|${this.size}`,
      this.site,
      this.issue,
      this.revision,
      this.from,
      this.to,
      this.selection,
    ].join('|'));
  }
}
