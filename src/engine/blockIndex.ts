/** A slot's block when the slot is empty. */
const EMPTY = -1;
/** Slots of a new table (it grows as keys arrive, up to 4 per block of the pool). */
const INITIAL_SLOTS = 1024;
/** Doubles per record of the pool (engine/kvBlockPool.ts): a record's hash is its first double. */
export const RECORD_DOUBLES = 4;

/**
 * The KV pool's hash → block index (engine/kvBlockPool.ts), built for the replay's hottest loop:
 * every prompt block is looked up, registered and, once evicted, dropped.
 *
 * - **Grouped homes.** The caller names where an entry's probe starts (its *home*): the engine
 *   gives the blocks of a prompt at positions 8j … 8j + 7 the homes h … h + 7, h the mix of the
 *   hash of position 8j (which the prefix up to it determines), so the blocks of one Mooncake hash
 *   id (512 tokens, 8 engine blocks of 64) sit in 8 consecutive slots, one cache line, and
 *   registering, looking up or evicting a prompt's blocks touches about one line per 8 blocks
 *   instead of one per block (the replay's registration cost was these misses). Equal keys always
 *   have equal homes, so the table answers exactly as a hash map does.
 * - **Keys in the pool's records, 8 bytes a slot.** A slot is `[home, block]`, two 32-bit words
 *   of one `Int32Array`; the key of the entry holding block b is the hash the pool keeps in b's
 *   record (`records`, the pool's records as doubles), which an entry's block always has (the pool
 *   takes the entry out, or points it at the next copy, before it clears a hash). A probe passes
 *   over a slot whose home differs without reading the key, so it reads a record only for the
 *   entry it is after (a hit, whose record the pool reads next anyway) or, rarely, one whose home
 *   matches by chance. Slots of 16 bytes with the key in the slot plus a parallel array of homes
 *   were 2.5 times as much memory, more than a core's L2 for the seed run's two workers; this
 *   layout plays the seed run's pool calls back 10–20 % faster (bench/kvPool.ts, docs/performance.md).
 * - **Eager deletion, low load.** An evicted block's entry is removed at once (linear probing's
 *   backward shift, which reads each moved entry's home from its slot): an evicted block is the
 *   LRU head, and its run's other blocks are evicted next, so their slots are already in cache.
 *   The table keeps at least 4 slots per key (at most `capacity` keys): a probe for an absent
 *   key, which every registration makes, ends at an empty slot after a short run. (Lazily
 *   deleted entries, kept until a rebuild, filled the table to one half and made those runs
 *   long.) It starts small and grows as keys arrive, so a pool costs nothing up front.
 * - **Keys read from an array.** Every method takes its key as `keys[at]` (the pool's record, or
 *   a caller's scratch) rather than as an argument: a double passed to a call that is not
 *   inlined is boxed, a heap number of garbage per block.
 */
export class BlockIndex {
  /** `[home, block]` per slot (block `EMPTY`: an empty slot). */
  private slots: Int32Array;
  private mask: number;
  /** Keys held. */
  private count = 0;
  /** Slots the table grows to: at least 4 per block of the pool. */
  private readonly maxSize: number;
  /**
   * The pool's records as doubles, where the key of each entry is read (`records[b * 4]` for
   * block b). The pool sets it, and sets it again whenever it moves its records.
   */
  records: Float64Array = new Float64Array(0);

  constructor(capacity: number) {
    let size = 16;
    while (size < 4 * capacity) size *= 2;
    this.maxSize = size;
    const initial = Math.min(size, INITIAL_SLOTS);
    this.slots = new Int32Array(2 * initial).fill(EMPTY);
    this.mask = initial - 1;
  }

  /** The block registered under the key `keys[at]` (whose home is `home`), or −1. */
  get(keys: Float64Array, at: number, home: number): number {
    const key = keys[at];
    const slots = this.slots;
    const records = this.records;
    const mask = this.mask;
    let i = home & mask;
    for (;;) {
      const b = slots[2 * i + 1];
      if (b === EMPTY) return -1;
      if (slots[2 * i] === home && records[b * RECORD_DOUBLES] === key) return b;
      i = (i + 1) & mask;
    }
  }

  /**
   * Points the key `keys[at]` (whose home is `home`) at `block` unless another block already
   * holds it: returns that block, or −1 when `block` now holds the key. `block`'s record already
   * holds the key.
   */
  holderOrInsert(keys: Float64Array, at: number, home: number, block: number): number {
    const key = keys[at];
    const slots = this.slots;
    const records = this.records;
    const mask = this.mask;
    let i = home & mask;
    for (;;) {
      const b = slots[2 * i + 1];
      if (b === EMPTY) break;
      if (slots[2 * i] === home && records[b * RECORD_DOUBLES] === key) return b;
      i = (i + 1) & mask;
    }
    if (4 * (this.count + 1) > this.mask + 1 && this.mask + 1 < this.maxSize) {
      this.grow();
      return this.holderOrInsert(keys, at, home, block);
    }
    slots[2 * i] = home;
    slots[2 * i + 1] = block;
    this.count++;
    return -1;
  }

  /** The slot of the key `keys[at]` (held, whose home is `home`), for `blockAt`, `setBlockAt` and `deleteSlot`. */
  slotOf(keys: Float64Array, at: number, home: number): number {
    const key = keys[at];
    const slots = this.slots;
    const records = this.records;
    const mask = this.mask;
    let i = home & mask;
    while (!(slots[2 * i] === home && records[slots[2 * i + 1] * RECORD_DOUBLES] === key)) i = (i + 1) & mask;
    return i;
  }

  /** The block slot `slot` points its key at. */
  blockAt(slot: number): number {
    return this.slots[2 * slot + 1];
  }

  /** Points the key in `slot` at `block` instead (a copy of the key: its record holds the key too); the key keeps its home. */
  setBlockAt(slot: number, block: number): void {
    this.slots[2 * slot + 1] = block;
  }

  /**
   * Grows the table fourfold (up to its largest size), reinserting every entry from its home: a
   * long run fills the pool, and four times as large a step reinserts a third as many keys on
   * the way there as doubling does.
   */
  private grow(): void {
    const old = this.slots;
    const size = Math.min(this.maxSize, 4 * (this.mask + 1));
    const slots = new Int32Array(2 * size).fill(EMPTY);
    const mask = size - 1;
    for (let e = 0; e < old.length; e += 2) {
      const block = old[e + 1];
      if (block === EMPTY) continue;
      const home = old[e];
      let i = home & mask;
      while (slots[2 * i + 1] !== EMPTY) i = (i + 1) & mask;
      slots[2 * i] = home;
      slots[2 * i + 1] = block;
    }
    this.slots = slots;
    this.mask = mask;
  }

  /** Removes the entry in `slot`; later entries of its probe run shift back into the hole. */
  deleteSlot(slot: number): void {
    const slots = this.slots;
    const mask = this.mask;
    let hole = slot;
    this.count--;
    let j = hole;
    for (;;) {
      j = (j + 1) & mask;
      const block = slots[2 * j + 1];
      if (block === EMPTY) break;
      const home = slots[2 * j];
      // The entry stays when its home lies cyclically in (hole, j]: its distance past the hole,
      // less one, is below j's (mod the size; a home on the hole wraps to the size less one). One
      // comparison for both cases: a separate test for a probe run that wraps past the table's
      // end first ran late in a run and deoptimized the pool's eviction path.
      if (((home - hole - 1) & mask) < ((j - hole) & mask)) continue;
      slots[2 * hole] = home;
      slots[2 * hole + 1] = block;
      hole = j;
    }
    slots[2 * hole + 1] = EMPTY;
  }
}
