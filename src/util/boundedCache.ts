/**
 * A map of at most `capacity` entries that drops its least recently used entry when a new one
 * would exceed it: what a long-lived process (a sweep worker) keeps between jobs without growing
 * with every distinct key it meets.
 */
export class BoundedCache<V> {
  // A Map iterates in insertion order: re-inserting an entry on use keeps the oldest first.
  private readonly entries = new Map<string, V>();

  constructor(readonly capacity: number) {
    if (!(Number.isInteger(capacity) && capacity >= 1)) {
      throw new RangeError(`cache capacity must be a positive integer, got ${capacity}`);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The value of `key`; on a miss `build()`'s, stored (evicting the least recently used). */
  get(key: string, build: () => V): V {
    if (this.entries.has(key)) {
      const hit = this.entries.get(key) as V;
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const value = build();
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    return value;
  }

  /** Removes `key` if it still maps to `value` (a failed build that a later one may have replaced). */
  deleteIf(key: string, value: V): void {
    if (this.entries.get(key) === value) this.entries.delete(key);
  }
}
