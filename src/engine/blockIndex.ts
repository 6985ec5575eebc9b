import { mixBlockHash } from "../util/blockHashTable.js";

const EMPTY = -1;

/**
 * The KV pool's hash → block index (engine/kvBlockPool.ts), built for the replay's hottest loop:
 * every prompt block is looked up, registered and, once evicted, dropped.
 *
 * - **Lazy deletion.** Evicting a block does not touch the index: an entry is live only while
 *   its block still holds its hash (the hash in the block's record in the pool, `KvBlockPool`), so a stale
 *   entry reads as absent. Deletion was a probe plus a backward shift per evicted block, two
 *   cache misses on a table far larger than the caches.
 * - **One cache line per probe.** Key and block sit side by side in one `Float64Array`
 *   (`[key, block]` per entry) instead of two arrays.
 * - **Grouped probes.** An entry's probe starts at the slot of its *group* key, not its own: the
 *   engine gives the blocks of a prompt at positions 8j … 8j + 7 one group (the hash of position
 *   8j, which the prefix up to it determines), so the blocks of one Mooncake hash id (512 tokens,
 *   8 engine blocks of 64) sit side by side in one probe run, and registering or looking up a
 *   prompt's blocks touches about one cache line per 8 blocks instead of one per block (the
 *   replay's registration cost was these misses). Equal keys always have equal groups, so the
 *   table answers exactly as a hash map does.
 * - **Bounded.** Stale entries count towards the load; when they would push it past one half,
 *   the table is rebuilt from the live blocks (at most `capacity`), so with room for
 *   4 × `capacity` entries a rebuild comes after at least `capacity` insertions: amortised O(1).
 *
 * Lookups return what a map with eager deletion returns, so the replay is unchanged.
 */
export class BlockIndex {
  private entries: Float64Array;
  private mask: number;
  /** Entries in the table, live or stale. */
  private count = 0;
  private readonly limit: number;

  /**
   * The pool's block records: block b's registered hash (−1 for none) is
   * `records[b * stride + hashField]`; the index reads it to tell live entries from stale ones
   * and to rebuild.
   */
  constructor(
    private readonly records: Float64Array,
    private readonly stride: number,
    private readonly hashField: number,
    private readonly capacity: number,
    /** Each block's group key while it holds a hash (the rebuild reinserts from it). */
    private readonly groups: Float64Array,
  ) {
    let size = 16;
    while (size < 4 * capacity) size *= 2;
    this.entries = new Float64Array(2 * size).fill(EMPTY);
    this.mask = size - 1;
    this.limit = size / 2;
  }

  /** The block registered under `key` (of group `group`), or −1. */
  get(key: number, group: number): number {
    const entries = this.entries;
    const mask = this.mask;
    let i = mixBlockHash(group) & mask;
    for (;;) {
      const k = entries[2 * i];
      if (k === key) {
        const block = entries[2 * i + 1] | 0;
        return this.records[block * this.stride + this.hashField] === key ? block : -1;
      }
      if (k === EMPTY) return -1;
      i = (i + 1) & mask;
    }
  }

  /**
   * Points `key` (of group `group`) at `block` unless a live block already holds it; true when it
   * did. The caller writes `key` into the block's record, and `group` into `groups`, after a true
   * answer.
   */
  setIfAbsent(key: number, group: number, block: number): boolean {
    const entries = this.entries;
    const mask = this.mask;
    let i = mixBlockHash(group) & mask;
    for (;;) {
      const k = entries[2 * i];
      if (k === key) {
        // A stale entry of the same hash is reused in place.
        if (this.records[(entries[2 * i + 1] | 0) * this.stride + this.hashField] === key) return false;
        entries[2 * i + 1] = block;
        return true;
      }
      if (k === EMPTY) break;
      i = (i + 1) & mask;
    }
    if (this.count >= this.limit) {
      this.rebuild();
      return this.setIfAbsent(key, group, block);
    }
    entries[2 * i] = key;
    entries[2 * i + 1] = block;
    this.count++;
    return true;
  }

  /** Drops every stale entry: the table is refilled from the blocks that hold a hash. */
  private rebuild(): void {
    const entries = this.entries.fill(EMPTY);
    const mask = this.mask;
    const records = this.records;
    let count = 0;
    for (let b = 0; b < this.capacity; b++) {
      const key = records[b * this.stride + this.hashField];
      if (key < 0) continue;
      let i = mixBlockHash(this.groups[b]) & mask;
      while (entries[2 * i] !== EMPTY) i = (i + 1) & mask;
      entries[2 * i] = key;
      entries[2 * i + 1] = b;
      count++;
    }
    this.count = count;
  }
}
