const EMPTY = -1;
/** Slots of a new table (it grows as keys arrive, up to 4 per block of the pool). */
const INITIAL_SLOTS = 1024;

/**
 * The KV pool's hash → block index (engine/kvBlockPool.ts), built for the replay's hottest loop:
 * every prompt block is looked up, registered and, once evicted, dropped.
 *
 * - **Grouped homes.** The caller names where an entry's probe starts (its *home*): the engine
 *   gives the blocks of a prompt at positions 8j … 8j + 7 the homes h … h + 7, h the mix of the
 *   hash of position 8j (which the prefix up to it determines), so the blocks of one Mooncake hash
 *   id (512 tokens, 8 engine blocks of 64) sit in 8 consecutive slots, and registering, looking
 *   up or evicting a prompt's blocks touches about one cache line per 4 blocks instead of one per
 *   block (the replay's registration cost was these misses). Equal keys always have equal homes,
 *   so the table answers exactly as a hash map does.
 * - **One cache line per probe.** Key and block sit side by side in one `Float64Array`
 *   (`[key, block]` per entry) instead of two arrays.
 * - **Eager deletion, low load.** An evicted block's entry is removed at once (linear probing's
 *   backward shift, which reads each moved entry's home from `homes`): an evicted block is the
 *   LRU head, and its run's other blocks are evicted next, so their slots are already in cache.
 *   The table keeps at least 4 slots per key (at most `capacity` keys): a probe for an absent
 *   key, which every registration makes, ends at an empty slot after a short run. (Lazily
 *   deleted entries, kept until a rebuild, filled the table to one half and made those runs
 *   long.) It starts small and grows as keys arrive, so a pool costs nothing up front.
 * - **Keys read from an array.** Every method takes its key as `keys[at]` (the pool's record, or
 *   a caller's scratch) rather than as an argument: a double passed to a call that is not
 *   inlined is boxed, a heap number of garbage per block.
 * - **Homes beside the entries.** Each slot's home is kept in a parallel array (`homes`), so
 *   the backward shift of a deletion and a growth read the homes of the entries they move in
 *   slot order, not from the moved blocks' records scattered over the pool.
 */
export class BlockIndex {
  private entries: Float64Array;
  private mask: number;
  /** Keys held. */
  private count = 0;
  /** Slots the table grows to: at least 4 per block of the pool. */
  private readonly maxSize: number;

  /** The home of the entry in each slot. */
  private homes: Int32Array;

  constructor(capacity: number) {
    let size = 16;
    while (size < 4 * capacity) size *= 2;
    this.maxSize = size;
    const initial = Math.min(size, INITIAL_SLOTS);
    this.entries = new Float64Array(2 * initial).fill(EMPTY);
    this.homes = new Int32Array(initial);
    this.mask = initial - 1;
  }

  /** The block registered under the key `keys[at]` (whose home is `home`), or −1. */
  get(keys: Float64Array, at: number, home: number): number {
    const key = keys[at];
    const entries = this.entries;
    const mask = this.mask;
    let i = home & mask;
    for (;;) {
      const k = entries[2 * i];
      if (k === key) return entries[2 * i + 1];
      if (k === EMPTY) return -1;
      i = (i + 1) & mask;
    }
  }

  /**
   * Points the key `keys[at]` (whose home is `home`) at `block` unless a block already holds it:
   * returns that block, or −1 when `block` now holds the key.
   */
  holderOrInsert(keys: Float64Array, at: number, home: number, block: number): number {
    const key = keys[at];
    const entries = this.entries;
    const mask = this.mask;
    let i = home & mask;
    for (;;) {
      const k = entries[2 * i];
      if (k === key) return entries[2 * i + 1];
      if (k === EMPTY) break;
      i = (i + 1) & mask;
    }
    if (4 * (this.count + 1) > this.mask + 1 && this.mask + 1 < this.maxSize) {
      this.grow();
      return this.holderOrInsert(keys, at, home, block);
    }
    entries[2 * i] = key;
    entries[2 * i + 1] = block;
    this.homes[i] = home;
    this.count++;
    return -1;
  }

  /** The slot of the key `keys[at]` (held, whose home is `home`), for `blockAt`, `setBlockAt` and `deleteSlot`. */
  slotOf(keys: Float64Array, at: number, home: number): number {
    const key = keys[at];
    const entries = this.entries;
    const mask = this.mask;
    let i = home & mask;
    while (entries[2 * i] !== key) i = (i + 1) & mask;
    return i;
  }

  /** The block slot `slot` points its key at. */
  blockAt(slot: number): number {
    return this.entries[2 * slot + 1];
  }

  /** Points the key in `slot` at `block` instead; the key keeps its home. */
  setBlockAt(slot: number, block: number): void {
    this.entries[2 * slot + 1] = block;
  }

  /**
   * Grows the table fourfold (up to its largest size), reinserting every key from its home: a
   * long run fills the pool, and four times as large a step reinserts a third as many keys on
   * the way there as doubling does.
   */
  private grow(): void {
    const old = this.entries;
    const size = Math.min(this.maxSize, 4 * (this.mask + 1));
    const entries = new Float64Array(2 * size).fill(EMPTY);
    const homes = new Int32Array(size);
    const mask = size - 1;
    const oldHomes = this.homes;
    for (let e = 0; e < old.length; e += 2) {
      const key = old[e];
      if (key === EMPTY) continue;
      const home = oldHomes[e >> 1];
      let i = home & mask;
      while (entries[2 * i] !== EMPTY) i = (i + 1) & mask;
      entries[2 * i] = key;
      entries[2 * i + 1] = old[e + 1];
      homes[i] = home;
    }
    this.entries = entries;
    this.homes = homes;
    this.mask = mask;
  }

  /** Removes the key in `slot`; later entries of its probe run shift back into the hole. */
  deleteSlot(slot: number): void {
    const entries = this.entries;
    const mask = this.mask;
    let hole = slot;
    this.count--;
    const homes = this.homes;
    let j = hole;
    for (;;) {
      j = (j + 1) & mask;
      const k = entries[2 * j];
      if (k === EMPTY) break;
      const at = homes[j] & mask;
      // The entry stays unless its home lies cyclically outside (hole, j].
      const stays = hole <= j ? hole < at && at <= j : hole < at || at <= j;
      if (stays) continue;
      entries[2 * hole] = k;
      entries[2 * hole + 1] = entries[2 * j + 1];
      homes[hole] = homes[j];
      hole = j;
    }
    entries[2 * hole] = EMPTY;
  }
}
