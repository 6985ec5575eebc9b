import { mixBlockHash } from "../util/blockHashTable.js";
import { BlockIndex } from "./blockIndex.js";

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
 * Only one physical copy of a hash is registered; a request that computes a block whose hash is
 * already registered keeps its copy private, and that copy is freed on release (as in vLLM).
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

/** Per-block record of `KvBlockPool.rec`: registered hash (−1: private), LRU links, references. */
const HASH = 0;
const PREV = 1;
const NEXT = 2;
const REFS = 3;
const STRIDE = 4;

/** `records` copied into records for `blocks` blocks, the new ones blank (no hash, no links, no references). */
function blankRecords(records: Float64Array, blocks: number): Float64Array {
  const rec = new Float64Array(blocks * STRIDE);
  rec.set(records);
  for (let at = records.length; at < rec.length; at += STRIDE) {
    rec[at + HASH] = -1;
    rec[at + PREV] = -1;
    rec[at + NEXT] = -1;
  }
  return rec;
}

/** Records made when a pool is built; they double as blocks are first handed out. */
const INITIAL_RECORDS = 1024;

export class KvBlockPool {
  readonly capacity: number;
  /**
   * One record of `STRIDE` doubles per block — hash, LRU prev and next (−1: none), reference
   * count — side by side, so that evicting, reusing or releasing a block touches one cache line
   * instead of one per field (the replay's per-block work is memory-bound; docs/performance.md).
   */
  private rec: Float64Array;
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
  /** Hash → block of the registered blocks (engine/blockIndex.ts). */
  private readonly byHash: BlockIndex;
  /** Each registered block's index home (`register`): where its probe starts. */
  private readonly homes: Int32Array;
  /** Blocks evicted from the cache over the pool's life (a hashed block reused for new data). */
  evictions = 0;
  private listener: KvEventListener | null = null;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError(`KV capacity must be > 0 blocks`);
    this.capacity = capacity;
    this.rec = blankRecords(new Float64Array(0), Math.min(capacity, INITIAL_RECORDS));
    this.freeStack = new Int32Array(capacity);
    this.homes = new Int32Array(capacity);
    this.byHash = new BlockIndex(capacity, this.homes);
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
    return this.byHash.get(hash, home);
  }

  isActive(block: number): boolean {
    return this.rec[block * STRIDE + REFS] > 0;
  }

  /** Takes a reference on a registered block found by `lookup` (reactivating it if inactive). */
  acquire(block: number): void {
    const at = block * STRIDE + REFS;
    if (this.rec[at]++ === 0) this.lruRemove(block);
  }

  /**
   * A fresh private block: from the free stack, else by evicting the LRU head. Returns -1 when
   * neither exists (capacity exhausted).
   */
  allocate(): number {
    let block: number;
    const rec = this.rec;
    if (this.freeTop > 0) {
      block = this.freeStack[--this.freeTop];
    } else if (this.neverUsed < this.capacity) {
      block = this.neverUsed++;
      if (block * STRIDE === rec.length) {
        // Records exist for the blocks handed out so far: double them (a pool costs nothing up
        // front; docs/performance.md "Start-up").
        this.rec = blankRecords(rec, Math.min(this.capacity, 2 * block));
        this.rec[block * STRIDE + REFS] = 1;
        return block;
      }
    } else if (this.lruHead >= 0) {
      block = this.lruHead;
      this.lruRemove(block);
      const hash = rec[block * STRIDE + HASH];
      this.byHash.delete(hash, this.homes[block]);
      rec[block * STRIDE + HASH] = -1;
      this.evictions++;
      if (this.listener !== null) this.listener.onBlockRemoved(hash);
    } else {
      return -1;
    }
    rec[block * STRIDE + REFS] = 1;
    return block;
  }

  /**
   * Registers a just-computed full block under its sequence hash, making it visible to later
   * prefix lookups (with the same `home`, as `lookup`). Returns false (block stays private) when
   * the hash already has a copy.
   */
  register(block: number, hash: number, home = mixBlockHash(hash)): boolean {
    const at = block * STRIDE + HASH;
    if (this.rec[at] >= 0 || !this.byHash.setIfAbsent(hash, home, block)) return false;
    this.rec[at] = hash;
    this.homes[block] = home;
    if (this.listener !== null) this.listener.onBlockStored(hash);
    return true;
  }

  /** Drops one reference; an unowned registered block becomes the newest LRU entry. */
  release(block: number): void {
    const rec = this.rec;
    const base = block * STRIDE;
    const rc = --rec[base + REFS];
    if (rc > 0) return;
    if (rc < 0) throw new Error(`KV block ${block} released more often than acquired`);
    if (rec[base + HASH] >= 0) {
      // Newest LRU entry.
      const tail = this.lruTail;
      rec[base + PREV] = tail;
      rec[base + NEXT] = -1;
      if (tail >= 0) rec[tail * STRIDE + NEXT] = block;
      else this.lruHead = block;
      this.lruTail = block;
      this.lruSize++;
    } else {
      this.freeStack[this.freeTop++] = block;
    }
  }

  /** Takes `block` (on the LRU list) off it. */
  private lruRemove(block: number): void {
    const rec = this.rec;
    const base = block * STRIDE;
    const prev = rec[base + PREV] | 0;
    const next = rec[base + NEXT] | 0;
    if (prev >= 0) rec[prev * STRIDE + NEXT] = next;
    else this.lruHead = next;
    if (next >= 0) rec[next * STRIDE + PREV] = prev;
    else this.lruTail = prev;
    rec[base + PREV] = -1;
    rec[base + NEXT] = -1;
    this.lruSize--;
  }

  /** Inactive blocks from oldest to newest (tests and diagnostics). */
  lruOrder(): number[] {
    const out: number[] = [];
    for (let b = this.lruHead; b >= 0; b = this.rec[b * STRIDE + NEXT] | 0) out.push(b);
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
    const rec = this.rec;
    // Blocks never handed out have no record yet: unreferenced and unregistered.
    const refs = (b: number): number => (b * STRIDE < rec.length ? rec[b * STRIDE + REFS] : 0);
    const hashAt = (b: number): number => (b * STRIDE < rec.length ? rec[b * STRIDE + HASH] : -1);
    const seen = new Uint8Array(cap);
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
    let last = -1;
    for (let b = this.lruHead; b >= 0; b = rec[b * STRIDE + NEXT] | 0) {
      if (seen[b] !== 0) return `block ${b} is both free and inactive, or on the LRU twice`;
      if ((rec[b * STRIDE + PREV] | 0) !== last) return `block ${b}'s LRU back link is broken`;
      seen[b] = 2;
      lru++;
      last = b;
      if (lru > cap) return "the LRU list has a cycle";
      if (refs(b) !== 0 || hashAt(b) < 0) return `inactive block ${b} is referenced or unregistered`;
    }
    if (last !== this.lruTail) return `the LRU tail is ${this.lruTail}, its last block ${last}`;
    if (lru !== this.lruSize) return `LRU holds ${lru} blocks, counter says ${this.lruSize}`;
    for (let b = 0; b < cap; b++) {
      if (refs(b) !== expectedRefs[b]) {
        return `block ${b} has ${refs(b)} references, its owners hold ${expectedRefs[b]}`;
      }
      if (seen[b] === 0 && refs(b) <= 0) return `block ${b} is lost (neither free, inactive nor active)`;
      if (seen[b] !== 0 && refs(b) > 0) return `active block ${b} is also free or inactive`;
      const h = hashAt(b);
      if (h >= 0 && this.byHash.get(h, this.homes[b]) !== b)
        return `registered block ${b} is not found under its hash`;
    }
    return null;
  }

  /** Registered hash of a block or -1 (tests and diagnostics). */
  hashOf(block: number): number {
    return block * STRIDE < this.rec.length ? this.rec[block * STRIDE + HASH] : -1;
  }
}
