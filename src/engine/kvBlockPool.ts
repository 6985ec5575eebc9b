import { mixBlockHash } from "../util/blockHashTable.js";
import { BlockIndex, RECORD_DOUBLES } from "./blockIndex.js";

/**
 * Paged KV cache of one worker (attention-DP rank) with prefix caching (`ai-dynamo/dynamo@2250705:lib/mocker/src/cache/vllm_block_pool.rs`).
 *
 * Every physical block is in exactly one of three states:
 *  - free:     unused: on the free stack, or never handed out yet;
 *  - active:   refCount > 0 (owned by ≥1 running request), cached (has a hash) or private;
 *  - inactive: refCount == 0 but cached (hash registered), on the LRU list, reusable by a
 *              prefix hit and evictable. Inactive blocks count as free capacity for admission.
 * Eviction takes the LRU head (oldest). Requests release their blocks leaf first, so a suffix
 * becomes an older LRU entry than its parent and is evicted first ("leaf-first" order).
 * **Copies of a hash.** A request that computes a block whose hash already has a cached copy (two
 * requests prefilling the same prefix at once) caches its block too, as a further copy of that hash:
 * the reference's pool keeps such duplicates (`HashCopies`, primary and a FIFO of duplicates,
 * `ai-dynamo/aisimulate@057c66e:crates/core/src/engine/cache/vllm_block_pool.rs` `cache_private`),
 * as vLLM v1's `BlockHashToBlockMap` keeps several blocks per hash. A lookup finds the primary (the
 * oldest copy still cached); each copy is released to the LRU list and evicted on its own; when the
 * primary is evicted the next copy becomes the primary, and the hash leaves the cache (a `removed`
 * event) only with its last copy. The index holds the primary; each copy's record names the next.
 *
 * **Owner-only runs.** A registered block whose hash no other request's prompt contains (the
 * source knows which: `Sequence.ownerOnlyFrom`) can only ever be found by a lookup of its owner,
 * and an owner looks its prefix up only when it is admitted. For such blocks the index entry, the
 * hash and the per-block LRU links are pure cost: the engine keeps them registered *by position*
 * (no index entry) and, when the owner completes, hands them back in one call
 * (`releaseOwnerOnlyRun`) as one LRU entry, a run whose blocks are evicted leaf first one by one
 * exactly as the per-block releases would have queued them. A run is a marker node on the LRU
 * list (node ids from `capacity` up), its blocks in `runIds`, a FIFO ring (runs leave the list
 * only from its head: no lookup can reach them to take one out of the middle). A request that
 * leaves without completing (preemption, cancellation) registers its owner-only blocks in the
 * index first (`register`), so its re-admission finds them as before. Counters, evictions and LRU
 * order are those of the block-at-a-time pool (test/engine/kvBlockPool.reference.test.ts). KV
 * events are per hash, so an owner-only run is refused while a listener is set.
 */
/**
 * Receives the pool's KV events (`ai-dynamo/dynamo@cfa2254:lib/kv-router/src/protocols.rs`): `stored` when a hash gets its first registered
 * copy, `removed` when that copy is evicted. Completing a request emits nothing (its blocks just
 * become inactive). The router's prefix index is fed only by these.
 */
export interface KvEventListener {
  onBlockStored(hash: number): void;
  onBlockRemoved(hash: number): void;
}

/**
 * Per-block records of `KvBlockPool`, 32 bytes each, read through two views of one buffer: the
 * registered hash as a double (−1: private) and six 32-bit fields — LRU prev and next (−1: none),
 * references, the hash's index home, and the next copy of the hash plus one (0: none). A block in
 * an owner-only run keeps the one reference its owner held: nothing reads it there (no lookup
 * finds the block), and the run's next owner takes it as it is, so handing a run back and
 * taking from it touch no record, only the run's ring ("Owner-only runs"). Evicting,
 * reusing, registering or releasing a block reads and writes one record, about one cache line,
 * instead of one line in each of three arrays (the replay's per-block work is memory-bound;
 * docs/performance.md). `HASH` indexes a record's doubles (`DOUBLES` per block), `PREV` … `COPY`
 * its 32-bit words (`INTS` per block; words 0 and 1 are the hash).
 */
const HASH = 0;
/** The index reads a record's hash as its first double (engine/blockIndex.ts "Keys in the pool's records"). */
const DOUBLES = RECORD_DOUBLES;
const PREV = 2;
const NEXT = 3;
const REFS = 4;
const HOME = 5;
const COPY = 6;
const INTS = 8;

/** Records for `blocks` blocks: those of `old` (blocks `0 .. old.length / INTS`), the new ones blank. */
function blankRecords(old: Int32Array, blocks: number): Int32Array {
  const ints = new Int32Array(blocks * INTS);
  ints.set(old);
  const hashes = new Float64Array(ints.buffer);
  for (let b = old.length / INTS; b < blocks; b++) {
    hashes[b * DOUBLES + HASH] = -1;
    ints[b * INTS + PREV] = -1;
    ints[b * INTS + NEXT] = -1;
  }
  return ints;
}

/** Records made when a pool is built; they double as blocks are first handed out. */
const INITIAL_RECORDS = 1024;

export class KvBlockPool {
  readonly capacity: number;
  /** The per-block records (`HASH` … `COPY`): the 32-bit fields, and the same buffer as doubles for the hashes. */
  private ints: Int32Array;
  private hashes: Float64Array;
  /** The LRU list of inactive blocks: oldest at the head (−1 when empty). */
  private lruHead = -1;
  private lruTail = -1;
  private lruSize = 0;
  /** Released private blocks, reused last-in first-out before any never-used block. */
  private readonly freeStack: Int32Array;
  private freeTop = 0;
  /**
   * Blocks `neverUsed..capacity-1` have never been handed out. They are the bottom of the free
   * stack in effect (taken in order 0, 1, 2, … once the stack is empty), kept as a counter so that
   * a pool costs no O(capacity) loop to build (start-up, docs/performance.md).
   */
  private neverUsed = 0;
  /** Hash → primary copy of the registered blocks (engine/blockIndex.ts). */
  private readonly byHash: BlockIndex;
  /** Owner-only runs on the LRU list, FIFO: run `r`'s node is `capacity + r`, its links here. */
  private readonly runPrev: Int32Array;
  private readonly runNext: Int32Array;
  /** Blocks left in each run (slot `r`); runs occupy slots `runHead .. runHead + runCount` (mod capacity). */
  private readonly runLength: Int32Array;
  private runHead = 0;
  private runCount = 0;
  /** The inactive owner-only blocks in eviction order, a ring of `runBlockCount` from `runBlockHead`. */
  private readonly runIds: Int32Array;
  private runBlockHead = 0;
  private runBlockCount = 0;
  /** A hash passed as a number, for the index (`BlockIndex` "Keys read from an array"). */
  private readonly key = new Float64Array(1);
  /** Where `allocate` receives a block taken from a run. */
  private readonly taken = new Int32Array(1);
  /** Blocks evicted from the cache over the pool's life (a hashed block reused for new data). */
  evictions = 0;
  private listener: KvEventListener | null = null;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError(`KV capacity must be > 0 blocks`);
    this.capacity = capacity;
    this.ints = blankRecords(new Int32Array(0), Math.min(capacity, INITIAL_RECORDS));
    this.hashes = new Float64Array(this.ints.buffer);
    this.freeStack = new Int32Array(capacity);
    this.byHash = new BlockIndex(capacity);
    this.byHash.records = this.hashes;
    this.runPrev = new Int32Array(capacity);
    this.runNext = new Int32Array(capacity);
    this.runLength = new Int32Array(capacity);
    this.runIds = new Int32Array(capacity);
    // Field states (docs/performance.md): the rings' heads first move when the cache first fills,
    // late in a replay, and a field's first change after its initialization makes V8 throw away
    // the compiled code that read it as a constant (the release path). Moved here once, it is
    // mutable before anything is compiled.
    this.runBlockHead = 1;
    this.runBlockHead = 0;
    this.runHead = 1;
    this.runHead = 0;
  }

  /** Whether KV events are sent (owner-only runs are refused then: events are per hash). */
  get hasListener(): boolean {
    return this.listener !== null;
  }

  /** Sends future stored/removed events to `listener` (null: none). */
  setListener(listener: KvEventListener | null): void {
    this.listener = listener;
  }

  /** Blocks held by running requests. */
  get activeBlocks(): number {
    return this.neverUsed - this.freeTop - this.lruSize;
  }

  /** Cached blocks with no owner (reusable, evictable). */
  get inactiveBlocks(): number {
    return this.lruSize;
  }

  get freeBlocks(): number {
    return this.freeTop + this.capacity - this.neverUsed;
  }

  /** Blocks an admission may claim: free plus inactive cached. */
  get availableBlocks(): number {
    return this.freeTop + this.capacity - this.neverUsed + this.lruSize;
  }

  /**
   * Physical block registered under `hash`, or -1. `home` is the index home the hash was
   * registered with (engine/blockIndex.ts "Grouped homes"); by default the hash's own mix.
   */
  lookup(hash: number, home = mixBlockHash(hash)): number {
    this.key[0] = hash;
    return this.byHash.get(this.key, 0, home);
  }

  /** `lookup(hashes[at], home)`, the hash read from an array (a double argument is garbage). */
  lookupAt(hashes: Float64Array, at: number, home: number): number {
    return this.byHash.get(hashes, at, home);
  }

  isActive(block: number): boolean {
    return this.ints[block * INTS + REFS] > 0;
  }

  /** Takes a reference on a registered block found by `lookup` (reactivating it if inactive). */
  acquire(block: number): void {
    if (this.ints[block * INTS + REFS]++ === 0) this.lruRemove(block);
  }

  /**
   * A fresh private block: from the free stack, else by evicting the LRU head. Returns -1 when
   * neither exists (capacity exhausted).
   */
  allocate(): number {
    let block: number;
    if (this.freeTop > 0) {
      block = this.freeStack[--this.freeTop];
    } else if (this.neverUsed < this.capacity) {
      block = this.neverUsed++;
      if (block * INTS === this.ints.length) {
        // Records exist for the blocks handed out so far: double them (a pool costs nothing up
        // front; docs/performance.md "Start-up").
        this.ints = blankRecords(this.ints, Math.min(this.capacity, 2 * block));
        this.hashes = new Float64Array(this.ints.buffer);
        this.byHash.records = this.hashes;
      }
    } else if (this.lruHead >= this.capacity) {
      this.takeFromHeadRun(this.taken, 0, 1);
      return this.taken[0];
    } else if (this.lruHead >= 0) {
      block = this.lruHead;
      this.lruRemove(block);
      this.evictions++;
      const at = block * DOUBLES + HASH;
      if (this.dropCopy(block) && this.listener !== null) this.listener.onBlockRemoved(this.hashes[at]);
      this.hashes[at] = -1;
    } else {
      return -1;
    }
    this.ints[block * INTS + REFS] = 1;
    return block;
  }

  /**
   * Allocates blocks into `ids[from .. to)` as `allocate` would one by one; returns the end
   * reached (`to`, or less when the cache ran out). Blocks taken from an owner-only run are
   * copied off its ring in one loop: the common allocation of a prompt's fresh blocks.
   */
  allocateInto(ids: Int32Array, from: number, to: number): number {
    let at = from;
    const cap = this.capacity;
    while (at < to) {
      if (this.freeTop === 0 && this.neverUsed === cap && this.lruHead >= cap) {
        const n = Math.min(to - at, this.runLength[this.lruHead - cap]);
        this.takeFromHeadRun(ids, at, n);
        at += n;
        continue;
      }
      const b = this.allocate();
      if (b < 0) break;
      ids[at++] = b;
    }
    return at;
  }

  /**
   * Caches a just-computed full block under its sequence hash, making it visible to later prefix
   * lookups (with the same `home`, as `lookup`). Returns whether the hash became visible (its first
   * copy: a `stored` event); a hash that already has a copy gets this block as its newest one
   * ("Copies of a hash"). A block registered already is left as it is (false).
   */
  register(block: number, hash: number, home = mixBlockHash(hash)): boolean {
    this.key[0] = hash;
    return this.registerAt(block, this.key, 0, home);
  }

  /** `register(block, hashes[at], home)`, the hash read from an array (a double argument is garbage). */
  registerAt(block: number, hashes: Float64Array, at: number, home: number): boolean {
    const own = block * DOUBLES + HASH;
    if (this.hashes[own] >= 0) return false;
    this.hashes[own] = hashes[at];
    const primary = this.byHash.holderOrInsert(this.hashes, own, home, block);
    const ints = this.ints;
    ints[block * INTS + HOME] = home;
    if (primary >= 0) {
      let last = primary;
      while (ints[last * INTS + COPY] !== 0) last = ints[last * INTS + COPY] - 1;
      ints[last * INTS + COPY] = block + 1;
      return false;
    }
    if (this.listener !== null) this.listener.onBlockStored(this.hashes[own]);
    return true;
  }

  /**
   * Takes the evicted `block` (its hash still in its record) out of its hash's copies: the next
   * copy becomes the primary when it was the primary. Returns whether it was the hash's last copy
   * (the hash left the cache).
   */
  private dropCopy(block: number): boolean {
    const ints = this.ints;
    const home = ints[block * INTS + HOME];
    const next = ints[block * INTS + COPY];
    ints[block * INTS + COPY] = 0;
    // One probe finds the hash's slot, which then loses the block or points past it.
    const index = this.byHash;
    const slot = index.slotOf(this.hashes, block * DOUBLES + HASH, home);
    const primary = index.blockAt(slot);
    if (primary === block) {
      if (next === 0) {
        index.deleteSlot(slot);
        return true;
      }
      index.setBlockAt(slot, next - 1);
      return false;
    }
    let before = primary;
    while (ints[before * INTS + COPY] !== block + 1) before = ints[before * INTS + COPY] - 1;
    ints[before * INTS + COPY] = next;
    return false;
  }

  /** Drops one reference; an unowned registered block becomes the newest LRU entry. */
  release(block: number): void {
    const ints = this.ints;
    const base = block * INTS;
    const rc = --ints[base + REFS];
    if (rc > 0) return;
    if (rc < 0) throw new Error(`KV block ${block} released more often than acquired`);
    if (this.hashes[block * DOUBLES + HASH] >= 0) {
      // Newest LRU entry.
      const tail = this.lruTail;
      ints[base + PREV] = tail;
      ints[base + NEXT] = -1;
      if (tail >= 0) this.setNext(tail, block);
      else this.lruHead = block;
      this.lruTail = block;
      this.lruSize++;
    } else {
      this.freeStack[this.freeTop++] = block;
    }
  }

  /**
   * Releases the owner-only blocks `ids[from .. to)` of a completing owner (each held once, by
   * it alone, unindexed) as one LRU entry: leaf first, as `release` one by one from `to − 1`
   * down would queue them had they been registered under hashes no lookup asks for.
   */
  releaseOwnerOnlyRun(ids: Int32Array, from: number, to: number): void {
    const n = to - from;
    if (n <= 0) return;
    if (this.listener !== null) throw new Error("internal: owner-only KV blocks with a KV event listener");
    const cap = this.capacity;
    let at = this.runBlockHead + this.runBlockCount;
    const runIds = this.runIds;
    // Each block keeps its owner's reference in its record (see the records above).
    for (let k = to - 1; k >= from; k--) {
      // The subtraction runs on every block: as `if (at >= cap) at -= cap` it first ran when the
      // ring first wrapped, late in a run, and deoptimized the release path (no type feedback yet).
      at -= at >= cap ? cap : 0;
      runIds[at++] = ids[k];
    }
    this.runBlockCount += n;
    let slot = this.runHead + this.runCount++;
    slot -= slot >= cap ? cap : 0;
    this.runLength[slot] = n;
    const node = cap + slot;
    const tail = this.lruTail;
    this.runPrev[slot] = tail;
    this.runNext[slot] = -1;
    if (tail >= 0) this.setNext(tail, node);
    else this.lruHead = node;
    this.lruTail = node;
    this.lruSize += n;
  }

  /**
   * Evicts the `n` oldest blocks of the run at the LRU head into `ids[at ..]`, each taken by its
   * new owner: evictions, with no index entry and no event.
   */
  private takeFromHeadRun(ids: Int32Array, at: number, n: number): void {
    const cap = this.capacity;
    const slot = this.lruHead - cap;
    const runIds = this.runIds;
    let head = this.runBlockHead;
    // Each block still holds the one reference its new owner takes (see the records above).
    for (let i = 0; i < n; i++) {
      ids[at + i] = runIds[head];
      if (++head === cap) head = 0;
    }
    this.runBlockHead = head;
    this.runBlockCount -= n;
    this.lruSize -= n;
    this.evictions += n;
    this.runLength[slot] -= n;
    if (this.runLength[slot] === 0) this.dropHeadRun(slot);
  }

  /** Run `slot`, the LRU head, is spent: its marker leaves the head of the list. */
  private dropHeadRun(slot: number): void {
    const next = this.runNext[slot];
    this.lruHead = next;
    if (next >= 0) this.setPrev(next, -1);
    else this.lruTail = -1;
    if (++this.runHead === this.capacity) this.runHead = 0;
    this.runCount--;
  }

  /** Sets the next link of LRU node `node` (a block, or `capacity + r` for run r). */
  private setNext(node: number, next: number): void {
    if (node >= this.capacity) this.runNext[node - this.capacity] = next;
    else this.ints[node * INTS + NEXT] = next;
  }

  private setPrev(node: number, prev: number): void {
    if (node >= this.capacity) this.runPrev[node - this.capacity] = prev;
    else this.ints[node * INTS + PREV] = prev;
  }

  private nextOf(node: number): number {
    return node >= this.capacity ? this.runNext[node - this.capacity] : this.ints[node * INTS + NEXT];
  }

  private prevOf(node: number): number {
    return node >= this.capacity ? this.runPrev[node - this.capacity] : this.ints[node * INTS + PREV];
  }

  /** Takes `block` (on the LRU list) off it. */
  private lruRemove(block: number): void {
    const ints = this.ints;
    const base = block * INTS;
    const prev = ints[base + PREV];
    const next = ints[base + NEXT];
    if (prev >= 0) this.setNext(prev, next);
    else this.lruHead = next;
    if (next >= 0) this.setPrev(next, prev);
    else this.lruTail = prev;
    ints[base + PREV] = -1;
    ints[base + NEXT] = -1;
    this.lruSize--;
  }

  /**
   * Visits the inactive blocks from oldest to newest, a run's blocks in their eviction order,
   * checking the list's links on the way; returns the first problem (a broken link, or what
   * `visit` returns), or null.
   */
  private walkLru(visit: (block: number, ownerOnly: boolean) => string | null): string | null {
    const cap = this.capacity;
    let runBlock = this.runBlockHead;
    let expectedRun = this.runHead;
    let prev = -1;
    let nodes = 0;
    for (let node = this.lruHead; node >= 0; node = this.nextOf(node)) {
      if (this.prevOf(node) !== prev) return `LRU node ${node}'s back link is broken`;
      if (++nodes > 2 * cap) return "the LRU list has a cycle";
      prev = node;
      if (node < cap) {
        const problem = visit(node, false);
        if (problem !== null) return problem;
        continue;
      }
      const slot = node - cap;
      if (slot !== expectedRun) return `owner-only run ${slot} is out of order (expected ${expectedRun})`;
      expectedRun = expectedRun + 1 === cap ? 0 : expectedRun + 1;
      for (let i = 0; i < this.runLength[slot]; i++) {
        const problem = visit(this.runIds[runBlock], true);
        if (problem !== null) return problem;
        runBlock = runBlock + 1 === cap ? 0 : runBlock + 1;
      }
    }
    if (prev !== this.lruTail) return `the LRU tail is ${this.lruTail}, its last node ${prev}`;
    return null;
  }

  /** Inactive blocks from oldest to newest (tests and diagnostics). */
  lruOrder(): number[] {
    const out: number[] = [];
    const problem = this.walkLru((b) => {
      out.push(b);
      return null;
    });
    if (problem !== null) throw new Error(`internal: ${problem}`);
    return out;
  }

  /**
   * Checks the pool's bookkeeping against the references its owners hold (`expectedRefs[b]`:
   * how many sequences list block b). Every block must be in exactly one state (free stack,
   * LRU, or active), the counters must match, and each registered hash must map back to its
   * block. Returns the first violation, or null. O(capacity): invariant checks only.
   */
  audit(expectedRefs: Int32Array): string | null {
    const cap = this.capacity;
    const seen = new Uint8Array(cap);
    // Blocks never handed out have no record yet: unreferenced and unregistered.
    const recorded = (b: number): number => (b * INTS < this.ints.length ? this.ints[b * INTS + REFS] : 0);
    // A block of an owner-only run (seen 3) is unreferenced whatever its record keeps.
    const refs = (b: number): number => (seen[b] === 3 ? 0 : recorded(b));
    const hashAt = (b: number): number => this.hashOf(b);
    for (let i = 0; i < this.freeTop; i++) {
      const b = this.freeStack[i];
      if (b >= this.neverUsed) return `block ${b} is on the free stack but was never handed out`;
      if (seen[b] !== 0) return `block ${b} is on the free stack twice`;
      seen[b] = 1;
    }
    for (let b = this.neverUsed; b < cap; b++) seen[b] = 1;
    for (let b = 0; b < cap; b++) {
      if (seen[b] === 1 && (refs(b) !== 0 || hashAt(b) >= 0))
        return `free block ${b} is referenced or registered`;
    }
    let lru = 0;
    let runBlocks = 0;
    const lruProblem = this.walkLru((b, ownerOnly) => {
      if (seen[b] !== 0) return `block ${b} is both free and inactive, or on the LRU twice`;
      seen[b] = ownerOnly ? 3 : 2;
      lru++;
      if (ownerOnly) {
        runBlocks++;
        if (recorded(b) !== 1 || hashAt(b) >= 0)
          return `owner-only inactive block ${b} does not keep its owner's one reference, or is indexed`;
      } else if (refs(b) !== 0 || hashAt(b) < 0) return `inactive block ${b} is referenced or unregistered`;
      return null;
    });
    if (lruProblem !== null) return lruProblem;
    if (lru !== this.lruSize) return `LRU holds ${lru} blocks, counter says ${this.lruSize}`;
    if (runBlocks !== this.runBlockCount)
      return `owner-only runs hold ${runBlocks} blocks, counter says ${this.runBlockCount}`;
    for (let b = 0; b < cap; b++) {
      if (refs(b) !== expectedRefs[b]) {
        return `block ${b} has ${refs(b)} references, its owners hold ${expectedRefs[b]}`;
      }
      if (seen[b] === 0 && refs(b) <= 0) return `block ${b} is lost (neither free, inactive nor active)`;
      if (seen[b] !== 0 && refs(b) > 0) return `active block ${b} is also free or inactive`;
      const h = hashAt(b);
      if (h >= 0 && !this.isCopyOf(b, h)) return `registered block ${b} is not found under its hash`;
    }
    return null;
  }

  /** Whether `block` is among the copies of `hash` that the index leads to (audit). */
  private isCopyOf(block: number, hash: number): boolean {
    const seen = new Set<number>();
    const ints = this.ints;
    this.key[0] = hash;
    for (
      let b = this.byHash.get(this.key, 0, ints[block * INTS + HOME]);
      b >= 0;
      b = ints[b * INTS + COPY] - 1
    ) {
      if (b === block) return true;
      if (seen.has(b) || this.hashOf(b) !== hash) return false;
      seen.add(b);
    }
    return false;
  }

  /** Registered hash of a block or -1 (tests and diagnostics). */
  hashOf(block: number): number {
    return block * INTS < this.ints.length ? this.hashes[block * DOUBLES + HASH] : -1;
  }
}
