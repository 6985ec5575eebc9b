/**
 * Block hash → set of worker slots, as a bitset of `wordsPerEntry` 32-bit words per hash.
 *
 * Open addressing with linear probing over typed arrays and backward-shift deletion (no
 * tombstones). Keys are the non-negative 53-bit chained block hashes of `traffic/blockHashes.ts`;
 * -1 marks an empty slot. A `Map<number, …>` with such keys boxes every key, and the router runs a
 * lookup per prompt block per request, so this table allocates only when it grows.
 *
 * The router keeps two of these: which workers hold a block in their KV cache (fed by KV events)
 * and which workers have a block in a live request (for decode-load deduplication). Both are
 * queried by {@link HashSlotSets.leadingDepths}, one walk for all candidate workers at once.
 */

import { mixBlockHash } from "./blockHashMix.js";

const EMPTY = -1;
const MIN_CAPACITY = 64;

export class HashSlotSets {
  private keys: Float64Array;
  private bits: Int32Array;
  private words: number;
  private mask: number;
  private count = 0;

  /** `slotCapacity`: slots representable before the bitsets widen (rounded up to 32). */
  constructor(slotCapacity = 32, initialCapacity = 1024) {
    let size = MIN_CAPACITY;
    while (size < initialCapacity) size *= 2;
    this.words = Math.max(1, Math.ceil(slotCapacity / 32));
    this.keys = new Float64Array(size).fill(EMPTY);
    this.bits = new Int32Array(size * this.words);
    this.mask = size - 1;
  }

  /** Number of hashes held by at least one slot. */
  get size(): number {
    return this.count;
  }

  get wordsPerEntry(): number {
    return this.words;
  }

  /** Widens every bitset so that slots `0 .. slots-1` fit (never narrows). */
  ensureSlotCapacity(slots: number): void {
    const words = Math.ceil(slots / 32);
    if (words > this.words) this.rehash(this.keys.length, words);
  }

  /** Entry index of `key`, or -1 when no slot holds it. */
  find(key: number): number {
    const keys = this.keys;
    let i = this.home(key);
    for (;;) {
      const k = keys[i];
      if (k === key) return i;
      if (k === EMPTY) return -1;
      i = (i + 1) & this.mask;
    }
  }

  has(key: number, slot: number): boolean {
    const e = this.find(key);
    return e >= 0 && (this.bits[e * this.words + (slot >>> 5)] & (1 << (slot & 31))) !== 0;
  }

  /** Adds `slot` to the set of `key`; returns false when it was already there. */
  add(key: number, slot: number): boolean {
    if ((this.count + 1) * 2 > this.keys.length) this.rehash(this.keys.length * 2, this.words);
    const keys = this.keys;
    let i = this.home(key);
    for (;;) {
      const k = keys[i];
      if (k === key) break;
      if (k === EMPTY) {
        keys[i] = key;
        this.count++;
        break;
      }
      i = (i + 1) & this.mask;
    }
    const w = i * this.words + (slot >>> 5);
    const bit = 1 << (slot & 31);
    if ((this.bits[w] & bit) !== 0) return false;
    this.bits[w] |= bit;
    return true;
  }

  /** Removes `slot` from the set of `key` (dropping the key when no slot is left); returns whether it was there. */
  remove(key: number, slot: number): boolean {
    const e = this.find(key);
    if (e < 0) return false;
    const base = e * this.words;
    const w = base + (slot >>> 5);
    const bit = 1 << (slot & 31);
    if ((this.bits[w] & bit) === 0) return false;
    this.bits[w] &= ~bit;
    for (let j = 0; j < this.words; j++) if (this.bits[base + j] !== 0) return true;
    this.deleteEntry(e);
    return true;
  }

  /** Forgets `slot` everywhere (a worker leaving). O(table size): rebuilds without the slot. */
  clearSlot(slot: number): void {
    const word = slot >>> 5;
    if (word >= this.words) return;
    const keep = ~(1 << (slot & 31));
    for (let e = 0; e < this.keys.length; e++) this.bits[e * this.words + word] &= keep;
    this.rehash(this.keys.length, this.words);
  }

  /**
   * For each candidate slot, the number of LEADING hashes of `hashes[offset .. offset+count)` that the
   * slot holds (stops at its first miss). Chained hashes make "slot holds block i" independent per
   * block. One walk serves all candidates: it stops at the first block no candidate still matches.
   *
   * @param slots candidate slots, `slots[0 .. slotCount)`
   * @param out receives the depth at `out[slot]` for every candidate slot (other entries untouched)
   * @param alive scratch of at least `wordsPerEntry` words
   */
  leadingDepths(
    hashes: Float64Array,
    offset: number,
    count: number,
    slots: Int32Array,
    slotCount: number,
    out: Int32Array,
    alive: Int32Array,
  ): void {
    const words = this.words;
    alive.fill(0, 0, words);
    for (let c = 0; c < slotCount; c++) {
      const s = slots[c];
      alive[s >>> 5] |= 1 << (s & 31);
      out[s] = count;
    }
    let anyAlive = slotCount > 0;
    const bits = this.bits;
    for (let i = 0; i < count && anyAlive; i++) {
      const e = this.find(hashes[offset + i]);
      const base = e * words;
      anyAlive = false;
      for (let w = 0; w < words; w++) {
        const a = alive[w];
        if (a === 0) continue;
        const held = e < 0 ? 0 : bits[base + w];
        let dropped = a & ~held;
        while (dropped !== 0) {
          const low = dropped & -dropped;
          out[(w << 5) | (31 - Math.clz32(low))] = i;
          dropped ^= low;
        }
        const still = a & held;
        alive[w] = still;
        if (still !== 0) anyAlive = true;
      }
    }
  }

  private home(key: number): number {
    return mixBlockHash(key) & this.mask;
  }

  private deleteEntry(i: number): void {
    const keys = this.keys;
    const bits = this.bits;
    const words = this.words;
    const mask = this.mask;
    this.count--;
    // Backward shift: pull later entries of the probe run into the hole unless their home slot
    // lies cyclically in (hole, j].
    let hole = i;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const k = keys[j];
      if (k === EMPTY) break;
      const home = this.home(k);
      const stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (stays) continue;
      keys[hole] = k;
      bits.copyWithin(hole * words, j * words, j * words + words);
      hole = j;
    }
    keys[hole] = EMPTY;
    bits.fill(0, hole * words, hole * words + words);
  }

  /** Reinserts every non-empty entry into a table of `size` entries × `words` words. */
  private rehash(size: number, words: number): void {
    const oldKeys = this.keys;
    const oldBits = this.bits;
    const oldWords = this.words;
    this.keys = new Float64Array(size).fill(EMPTY);
    this.bits = new Int32Array(size * words);
    this.words = words;
    this.mask = size - 1;
    this.count = 0;
    for (let e = 0; e < oldKeys.length; e++) {
      const key = oldKeys[e];
      if (key === EMPTY) continue;
      let nonEmpty = false;
      for (let w = 0; w < oldWords; w++) if (oldBits[e * oldWords + w] !== 0) nonEmpty = true;
      if (!nonEmpty) continue;
      let i = this.home(key);
      while (this.keys[i] !== EMPTY) i = (i + 1) & this.mask;
      this.keys[i] = key;
      this.count++;
      for (let w = 0; w < oldWords; w++) this.bits[i * words + w] = oldBits[e * oldWords + w];
    }
  }
}
