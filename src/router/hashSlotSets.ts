/**
 * Block hash → set of worker slots, as a bitset of `wordsPerEntry` 32-bit words per hash: a view
 * over the one block-hash table (util/blockHashTable.ts), the bitset being an entry's payload. The
 * router runs a lookup per prompt block per request, so this allocates only when it grows.
 *
 * The router keeps two of these: which workers hold a block in their KV cache (fed by KV events)
 * and which workers have a block in a live request (for decode-load deduplication). Both are
 * queried by {@link HashSlotSets.leadingDepths}, one walk for all candidate workers at once.
 */

import { BlockHashTable } from "../util/blockHashTable.js";

const MIN_CAPACITY = 64;

export class HashSlotSets {
  private readonly table: BlockHashTable;

  /** `slotCapacity`: slots representable before the bitsets widen (rounded up to 32). */
  constructor(slotCapacity = 32, initialCapacity = 1024) {
    this.table = new BlockHashTable(
      Math.max(MIN_CAPACITY, initialCapacity),
      Math.max(1, Math.ceil(slotCapacity / 32)),
    );
  }

  /** Number of hashes held by at least one slot. */
  get size(): number {
    return this.table.size;
  }

  get wordsPerEntry(): number {
    return this.table.stride;
  }

  /** Widens every bitset so that slots `0 .. slots-1` fit (never narrows). */
  ensureSlotCapacity(slots: number): void {
    this.table.widen(Math.ceil(slots / 32));
  }

  /** Entry index of `key`, or -1 when no slot holds it. */
  find(key: number): number {
    return this.table.find(key);
  }

  has(key: number, slot: number): boolean {
    const table = this.table;
    const e = table.find(key);
    return e >= 0 && (table.payload[e * table.stride + (slot >>> 5)] & (1 << (slot & 31))) !== 0;
  }

  /** Adds `slot` to the set of `key`; returns false when it was already there. */
  add(key: number, slot: number): boolean {
    const table = this.table;
    const i = table.insert(key);
    const bits = table.payload;
    const w = i * table.stride + (slot >>> 5);
    const bit = 1 << (slot & 31);
    if ((bits[w] & bit) !== 0) return false;
    bits[w] |= bit;
    return true;
  }

  /** Removes `slot` from the set of `key` (dropping the key when no slot is left); returns whether it was there. */
  remove(key: number, slot: number): boolean {
    const table = this.table;
    const e = table.find(key);
    if (e < 0) return false;
    const bits = table.payload;
    const words = table.stride;
    const base = e * words;
    const w = base + (slot >>> 5);
    const bit = 1 << (slot & 31);
    if ((bits[w] & bit) === 0) return false;
    bits[w] &= ~bit;
    for (let j = 0; j < words; j++) if (bits[base + j] !== 0) return true;
    table.deleteAt(e);
    return true;
  }

  /** Forgets `slot` everywhere (a worker leaving). O(table size): rebuilds without the slot. */
  clearSlot(slot: number): void {
    const table = this.table;
    const words = table.stride;
    const word = slot >>> 5;
    if (word >= words) return;
    const keep = ~(1 << (slot & 31));
    const bits = table.payload;
    for (let e = 0; e < table.keys.length; e++) bits[e * words + word] &= keep;
    table.dropEmpty();
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
    const table = this.table;
    const words = table.stride;
    alive.fill(0, 0, words);
    for (let c = 0; c < slotCount; c++) {
      const s = slots[c];
      alive[s >>> 5] |= 1 << (s & 31);
      out[s] = count;
    }
    let anyAlive = slotCount > 0;
    const bits = table.payload;
    for (let i = 0; i < count && anyAlive; i++) {
      const e = table.find(hashes[offset + i]);
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
}
