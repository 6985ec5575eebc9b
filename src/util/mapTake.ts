/** Map helpers shared by the engines' bookkeeping of requests by id. */

/** Removes `key` from `map` and returns what it held; undefined (and `map` unchanged) when absent. */
export function takeEntry<K, V>(map: Map<K, V>, key: K): V | undefined {
  const value = map.get(key);
  if (value !== undefined) map.delete(key);
  return value;
}
