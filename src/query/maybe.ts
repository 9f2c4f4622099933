/**
 * Values that are either at hand or on their way. The read model answers from
 * memory nearly always; planning over it with `then` instead of `await` stays
 * synchronous while every input is in memory, so a cached forecast is answered
 * in the turn its request arrived, without a promise or a microtask per lookup.
 */
export type Maybe<T> = T | Promise<T>;

/** f of the value, now if it is at hand, else once it resolves. A throw in f is thrown now, or rejects later. */
export function then<T, U>(x: Maybe<T>, f: (value: T) => Maybe<U>): Maybe<U> {
  return x instanceof Promise ? x.then(f) : f(x);
}
