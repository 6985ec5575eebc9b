/**
 * The one open-addressing table of the simulator, keyed by block hashes: the engine's prefix
 * cache index (engine/blockHashIndex.ts), the router's per-worker reference counts
 * (router/hashCounter.ts) and its hash → worker-slot bitsets (router/hashSlotSets.ts) are thin
 * views over it.
 *
 * Keys are the non-negative 53-bit integer block hashes of traffic/blockHashes.ts; -1 marks an
 * empty entry. A `Map<number, …>` with such keys boxes every key, and the replay probes these
 * tables per prompt block, so everything is typed arrays: linear probing, backward-shift deletion
 * (no tombstones), doubling when half full. Each entry carries `stride` 32-bit payload words at
 * `payload[entry * stride ..]`, zero when the entry is created. Entry indices stay valid until
 * the next insert or delete (both may move entries).
 */

const EMPTY = -1;
const MIN_SIZE = 16;

/**
 * 32-bit mix of a non-negative 53-bit block hash (its low and high words, through murmur3's
 * fmix32); the table masks it to its size.
 */
export function mixBlockHash(key: number): number {
  let h = (key >>> 0) ^ Math.imul((key / 4294967296) >>> 0, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

export class BlockHashTable {
  keys: Float64Array;
  payload: Int32Array;
  private strideWords: number;
  private mask: number;
  private count = 0;

  /** `minSize`: entries allocated up front (rounded up to a power of two, at least 16). */
  constructor(minSize: number, stride = 1) {
    let size = MIN_SIZE;
    while (size < minSize) size *= 2;
    this.strideWords = stride;
    this.keys = new Float64Array(size).fill(EMPTY);
    this.payload = new Int32Array(size * stride);
    this.mask = size - 1;
  }

  /** Keys held. */
  get size(): number {
    return this.count;
  }

  /** Payload words per entry. */
  get stride(): number {
    return this.strideWords;
  }

  /** Entry index of `key`, or -1. */
  find(key: number): number {
    const i = this.slotOf(key);
    return this.keys[i] === key ? i : -1;
  }

  /** Entry index of `key`, inserted (with a zero payload) when absent. */
  insert(key: number): number {
    const keys = this.keys;
    const i = this.slotOf(key);
    if (keys[i] === key) return i;
    if ((this.count + 1) * 2 > keys.length) {
      this.rehash(keys.length * 2, this.strideWords, false);
      return this.insert(key);
    }
    keys[i] = key;
    this.count++;
    return i;
  }

  /** The slot holding `key`, or the empty slot that ends its probe run (where it would go). */
  private slotOf(key: number): number {
    const keys = this.keys;
    const mask = this.mask;
    let i = mixBlockHash(key) & mask;
    for (;;) {
      const k = keys[i];
      if (k === key || k === EMPTY) return i;
      i = (i + 1) & mask;
    }
  }

  /** Removes entry `i`: later entries of its probe run shift back into the hole. */
  deleteAt(i: number): void {
    const keys = this.keys;
    const payload = this.payload;
    const stride = this.strideWords;
    const mask = this.mask;
    this.count--;
    // Pull later entries of the probe run into the hole unless their home lies cyclically in
    // (hole, j].
    let hole = i;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const k = keys[j];
      if (k === EMPTY) break;
      const home = mixBlockHash(k) & mask;
      const stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (stays) continue;
      keys[hole] = k;
      if (stride === 1) payload[hole] = payload[j];
      else payload.copyWithin(hole * stride, j * stride, j * stride + stride);
      hole = j;
    }
    keys[hole] = EMPTY;
    if (stride === 1) payload[hole] = 0;
    else payload.fill(0, hole * stride, hole * stride + stride);
  }

  /** Widens every entry's payload to `stride` words (new words zero; never narrows). */
  widen(stride: number): void {
    if (stride > this.strideWords) this.rehash(this.keys.length, stride, false);
  }

  /** Drops every entry whose payload is all zero (after clearing payload words in bulk). */
  dropEmpty(): void {
    this.rehash(this.keys.length, this.strideWords, true);
  }

  /** Reinserts the entries into a table of `size` entries × `stride` words. */
  private rehash(size: number, stride: number, dropEmpty: boolean): void {
    const oldKeys = this.keys;
    const oldPayload = this.payload;
    const oldStride = this.strideWords;
    const keys = new Float64Array(size).fill(EMPTY);
    const payload = new Int32Array(size * stride);
    const mask = size - 1;
    let count = 0;
    for (let e = 0; e < oldKeys.length; e++) {
      const key = oldKeys[e];
      if (key === EMPTY) continue;
      const from = e * oldStride;
      if (dropEmpty) {
        let nonEmpty = false;
        for (let w = 0; w < oldStride; w++) if (oldPayload[from + w] !== 0) nonEmpty = true;
        if (!nonEmpty) continue;
      }
      let i = mixBlockHash(key) & mask;
      while (keys[i] !== EMPTY) i = (i + 1) & mask;
      keys[i] = key;
      count++;
      for (let w = 0; w < oldStride; w++) payload[i * stride + w] = oldPayload[from + w];
    }
    this.keys = keys;
    this.payload = payload;
    this.strideWords = stride;
    this.mask = mask;
    this.count = count;
  }
}
