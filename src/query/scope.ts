/**
 * Which sites a caller may see. A scope is part of how sites are looked up (by
 * id, by nearest point, in lists and counts), so a site outside it and a site
 * that does not exist take the same path and get the same answer.
 */
export interface Scope {
  /** Names the scope in cache keys: '' for every site, else a short text that is the same for the same set of sites. */
  readonly id: string;
  /** The visible sites; null: every site. */
  readonly farms: ReadonlySet<string> | null;
}

export const EVERY_SITE: Scope = Object.freeze({ id: '', farms: null });

export const sees = (scope: Scope, farmId: string): boolean => scope.farms === null || scope.farms.has(farmId);

/** The scope of exactly these sites (order and repeats do not matter); one object per distinct set. */
export function scopeOf(farmIds: readonly string[] | null, known: Map<string, Scope> = SCOPES): Scope {
  if (farmIds === null) return EVERY_SITE;
  const sorted = [...new Set(farmIds)].sort();
  // A NUL cannot occur in a farm_id, so the joined text names the set exactly; the id is short, since it
  // prefixes a scoped caller's cache keys on every request.
  const text = sorted.join('\u0000');
  let scope = known.get(text);
  if (scope === undefined) {
    scope = Object.freeze({ id: `s${known.size + 1}`, farms: new Set(sorted) });
    known.set(text, scope);
  }
  return scope;
}

/** Every scope made in this process, by its sites; keys are few (one set per distinct key scope). */
const SCOPES = new Map<string, Scope>();
