import { LruList } from "../util/lruList.js";
import { BlockHashIndex } from "./blockHashIndex.js";

/**
 * A bounded set of block hashes in slots `0 .. capacity−1`, least recently used first out (typed
 * arrays, no allocation after construction): the store behind the host (G2) and disk (G3) KV
 * tiers. A caller keeps per-slot facts of its own in arrays indexed by the slot.
 */
export class LruBlockSet {
  readonly capacity: number;
  private readonly slotHash: Float64Array;
  private readonly lru: LruList;
  private readonly byHash: BlockHashIndex;
  private used = 0;
  /** The hash the last `insert` evicted, or −1 (block hashes are ≥ 0). */
  evictedHash = -1;

  constructor(capacity: number, what: string) {
    if (!Number.isInteger(capacity) || capacity <= 0)
      throw new RangeError(`${what} capacity must be > 0 blocks`);
    this.capacity = capacity;
    this.slotHash = new Float64Array(capacity).fill(-1);
    this.lru = new LruList(capacity);
    this.byHash = new BlockHashIndex(capacity);
  }

  get size(): number {
    return this.used;
  }

  /** The slot holding `hash`, or −1. */
  slotOf(hash: number): number {
    return this.byHash.get(hash);
  }

  hashAt(slot: number): number {
    return this.slotHash[slot];
  }

  /** `slot` becomes the newest entry. */
  touch(slot: number): void {
    this.lru.remove(slot);
    this.lru.pushTail(slot);
  }

  /**
   * Adds `hash` (not in the set) as the newest entry and returns its slot; when full, the oldest
   * entry makes room and its hash is left in `evictedHash` (−1 when nothing was evicted).
   */
  insert(hash: number): number {
    let slot: number;
    this.evictedHash = -1;
    if (this.used < this.capacity) {
      slot = this.used++;
    } else {
      slot = this.lru.head;
      this.lru.remove(slot);
      const old = this.slotHash[slot];
      this.byHash.delete(old);
      this.evictedHash = old;
    }
    this.slotHash[slot] = hash;
    this.byHash.setIfAbsent(hash, slot);
    this.lru.pushTail(slot);
    return slot;
  }
}
