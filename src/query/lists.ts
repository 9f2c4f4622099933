/**
 * The site list and the run list as a scope sees them: sites outside it are
 * absent, runs are listed only when they hold data of a visible site, and the
 * count of sites per run counts visible sites only.
 */
import type { Farm, IssueSummary, Page, Store } from '../store/store.js';
import type { Scope } from './scope.js';
import { farmById } from './siteLookup.js';

export async function listFarms(store: Store, scope: Scope, offset: number, limit: number): Promise<Page<Farm>> {
  if (scope.farms === null) return store.listFarms(offset, limit);
  // A scope names few sites: read them by id rather than walk the registry.
  const farms = (await Promise.all([...scope.farms].map((id) => store.getFarm(id)))).filter((f): f is Farm => f !== undefined);
  farms.sort((a, b) => (a.farmId < b.farmId ? -1 : a.farmId > b.farmId ? 1 : 0));
  return { total: farms.length, items: farms.slice(offset, offset + limit) };
}

/** Runs newest first; with farmId, those holding data of that site (not found when the scope does not see it). */
export async function listIssues(
  store: Store,
  scope: Scope,
  farmId: string | undefined,
  offset: number,
  limit: number,
): Promise<Page<IssueSummary>> {
  if (farmId !== undefined) await farmById(store, farmId, scope);
  return store.listIssues(farmId, offset, limit, scope.farms === null ? undefined : [...scope.farms]);
}
