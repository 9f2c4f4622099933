/** What the HTTP layer is given by the command that builds it. */
import type { SiteRules } from '../query/siteLookup.js';
import type { Store } from '../store/store.js';

export interface AppContext {
  readonly store: Store;
  readonly rules: SiteRules;
  readonly version: string;
}
