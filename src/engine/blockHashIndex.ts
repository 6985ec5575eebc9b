/**
 * Hash → block map for the prefix cache: open addressing with linear probing over typed arrays
 * and backward-shift deletion (no tombstones). Keys are the 53-bit integer block hashes of
 * `traffic/blockHashes.ts` (never negative). A `Map<number, number>` with such keys stores boxed
 * doubles and was the replay's hottest spot; this index allocates nothing after construction.
 */
export class BlockHashIndex {
  private readonly keys: Float64Array;
  private readonly values: Int32Array;
  private readonly mask: number;
  private count = 0;

  /** `maxEntries`: the most keys ever held at once (the pool's block count). */
  constructor(maxEntries: number) {
    let size = 16;
    while (size < maxEntries * 2) size *= 2;
    this.keys = new Float64Array(size).fill(-1);
    this.values = new Int32Array(size);
    this.mask = size - 1;
  }

  get size(): number {
    return this.count;
  }

  /** Value stored under `key`, or -1. */
  get(key: number): number {
    const keys = this.keys;
    let i = this.slot(key);
    for (;;) {
      const k = keys[i];
      if (k === key) return this.values[i];
      if (k < 0) return -1;
      i = (i + 1) & this.mask;
    }
  }

  has(key: number): boolean {
    return this.get(key) >= 0;
  }

  /** Inserts or replaces. */
  set(key: number, value: number): void {
    const keys = this.keys;
    let i = this.slot(key);
    for (;;) {
      const k = keys[i];
      if (k === key) break;
      if (k < 0) {
        if (this.count * 2 >= keys.length) throw new Error("internal: block hash index overfull");
        keys[i] = key;
        this.count++;
        break;
      }
      i = (i + 1) & this.mask;
    }
    this.values[i] = value;
  }

  /** Removes `key` if present. */
  delete(key: number): void {
    const keys = this.keys;
    const values = this.values;
    const mask = this.mask;
    let i = this.slot(key);
    for (;;) {
      const k = keys[i];
      if (k < 0) return;
      if (k === key) break;
      i = (i + 1) & mask;
    }
    this.count--;
    // Backward-shift: pull later entries of the probe run into the hole when their home slot
    // does not lie cyclically in (hole, j].
    let hole = i;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const k = keys[j];
      if (k < 0) break;
      const home = this.slot(k);
      const between = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (between) continue;
      keys[hole] = k;
      values[hole] = values[j];
      hole = j;
    }
    keys[hole] = -1;
  }

  private slot(key: number): number {
    // Low and high 32-bit halves of the integer key, mixed (murmur3 fmix32).
    let h = (key >>> 0) ^ Math.imul((key / 4294967296) >>> 0, 0x9e3779b1);
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) & this.mask;
  }
}
