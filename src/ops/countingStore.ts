/**
 * The store as the server uses it, with every failed call counted for
 * `forecastd_store_errors_total`: one wrapper around the whole interface, so
 * that every caller (routes, the read model, the key table, readiness, what
 * is added later) is counted without knowing of it. A refusal the interface
 * promises (an unknown site, a key or webhook name in use) is an answer, not
 * an error.
 * The wrapper adds a promise per store call; the forecast path calls the store
 * only when its in-memory model is stale.
 */
import { KeyNameTakenError, UnknownFarmError, WebhookNameTakenError, type Store } from '../store/store.js';

const isRefusal = (err: unknown): boolean =>
  err instanceof UnknownFarmError || err instanceof KeyNameTakenError || err instanceof WebhookNameTakenError;

export function countingStore(store: Store, countError: () => void): Store {
  const fail = (err: unknown): never => {
    if (!isRefusal(err)) countError();
    throw err;
  };
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      let w = wrapped.get(prop);
      if (w === undefined) {
        w = (...args: unknown[]): unknown => {
          try {
            // Read at each call, as a call on the store itself would.
            const method = Reflect.get(target, prop, target) as (...a: unknown[]) => unknown;
            const result = method.apply(target, args);
            return result instanceof Promise ? result.catch(fail) : result;
          } catch (err) {
            return fail(err);
          }
        };
        wrapped.set(prop, w);
      }
      return w;
    },
  });
}
