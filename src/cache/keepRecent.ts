/**
 * A function computed once per key, its results kept for the `limit` keys
 * computed last (the oldest computed is dropped first). For small derived
 * tables asked for a handful of keys again and again: date texts, record heads
 * and envelope run fields per issue time, the coding per Accept-Encoding value,
 * a series' column heads.
 */
export function keepRecent<K, V>(limit: number, compute: (key: K) => V): (key: K) => V {
  const kept = new Map<K, V>();
  return (key) => {
    let v = kept.get(key);
    if (v === undefined) {
      v = compute(key);
      if (kept.size >= limit) kept.delete(kept.keys().next().value as K);
      kept.set(key, v);
    }
    return v;
  };
}
