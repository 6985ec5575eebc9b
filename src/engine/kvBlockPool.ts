import { LruList } from "../util/lruList.js";
import { BlockHashIndex } from "./blockHashIndex.js";

/**
 * Paged KV cache of one worker (attention-DP rank) with prefix caching (mocker.md §1.4).
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
 * Receives the pool's KV events (mocker.md §5.2): `stored` when a hash gets its first registered
 * copy, `removed` when that copy is evicted. Completing a request emits nothing (its blocks just
 * become inactive). The router's prefix index is fed only by these.
 */
export interface KvEventListener {
  onBlockStored(hash: number): void;
  onBlockRemoved(hash: number): void;
}

export class KvBlockPool {
  readonly capacity: number;
  private readonly refCount: Int32Array;
  /** Registered hash of a block, or -1 for a private (unregistered) block. */
  private readonly blockHash: Float64Array;
  /** The inactive blocks, oldest first (its size is the inactive count). */
  private readonly lru: LruList;
  /** Released private blocks, reused last-in first-out before any never-used block. */
  private readonly freeStack: Int32Array;
  private freeTop = 0;
  /**
   * Blocks `neverUsed..capacity-1` have never been handed out. They are the bottom of the free
   * stack in effect (taken in order 0, 1, 2, … once the stack is empty), kept as a counter so that
   * a pool costs no O(capacity) loop to build (start-up, docs/performance.md).
   */
  private neverUsed = 0;
  private readonly byHash: BlockHashIndex;
  /** Blocks evicted from the cache over the pool's life (a hashed block reused for new data). */
  evictions = 0;
  private listener: KvEventListener | null = null;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity <= 0) throw new RangeError(`KV capacity must be > 0 blocks`);
    this.capacity = capacity;
    this.refCount = new Int32Array(capacity);
    this.blockHash = new Float64Array(capacity).fill(-1);
    this.lru = new LruList(capacity);
    this.freeStack = new Int32Array(capacity);
    this.byHash = new BlockHashIndex(capacity);
  }

  /** Sends future stored/removed events to `listener` (null: none). */
  setListener(listener: KvEventListener | null): void {
    this.listener = listener;
  }

  /** Blocks held by running requests. */
  get activeBlocks(): number {
    return this.neverUsed - this.freeTop - this.lru.size;
  }

  /** Cached blocks with no owner (reusable, evictable). */
  get inactiveBlocks(): number {
    return this.lru.size;
  }

  get freeBlocks(): number {
    return this.freeTop + this.capacity - this.neverUsed;
  }

  /** Blocks an admission may claim: free plus inactive cached. */
  get availableBlocks(): number {
    return this.freeTop + this.capacity - this.neverUsed + this.lru.size;
  }

  /** Physical block registered under `hash`, or -1. */
  lookup(hash: number): number {
    return this.byHash.get(hash);
  }

  isActive(block: number): boolean {
    return this.refCount[block] > 0;
  }

  /** Takes a reference on a registered block found by `lookup` (reactivating it if inactive). */
  acquire(block: number): void {
    if (this.refCount[block]++ === 0) this.lru.remove(block);
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
    } else if (this.lru.head >= 0) {
      block = this.lru.head;
      this.lru.remove(block);
      const hash = this.blockHash[block];
      this.byHash.delete(hash);
      this.blockHash[block] = -1;
      this.evictions++;
      if (this.listener !== null) this.listener.onBlockRemoved(hash);
    } else {
      return -1;
    }
    this.refCount[block] = 1;
    return block;
  }

  /**
   * Registers a just-computed full block under its sequence hash, making it visible to later
   * prefix lookups. Returns false (block stays private) when the hash already has a copy.
   */
  register(block: number, hash: number): boolean {
    if (this.blockHash[block] >= 0 || !this.byHash.setIfAbsent(hash, block)) return false;
    this.blockHash[block] = hash;
    if (this.listener !== null) this.listener.onBlockStored(hash);
    return true;
  }

  /** Drops one reference; an unowned registered block becomes the newest LRU entry. */
  release(block: number): void {
    const rc = --this.refCount[block];
    if (rc > 0) return;
    if (rc < 0) throw new Error(`KV block ${block} released more often than acquired`);
    if (this.blockHash[block] >= 0) {
      this.lru.pushTail(block);
    } else {
      this.freeStack[this.freeTop++] = block;
    }
  }

  /** Inactive blocks from oldest to newest (tests and diagnostics). */
  lruOrder(): number[] {
    const out: number[] = [];
    for (let b = this.lru.head; b >= 0; b = this.lru.next(b)) out.push(b);
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
    for (let i = 0; i < this.freeTop; i++) {
      const b = this.freeStack[i];
      if (b >= this.neverUsed) return `block ${b} is on the free stack but was never handed out`;
      if (seen[b] !== 0) return `block ${b} is on the free stack twice`;
      seen[b] = 1;
    }
    for (let b = this.neverUsed; b < cap; b++) seen[b] = 1;
    for (let b = 0; b < cap; b++) {
      if (seen[b] === 1 && (this.refCount[b] !== 0 || this.blockHash[b] >= 0))
        return `free block ${b} is referenced or registered`;
    }
    let lru = 0;
    for (let b = this.lru.head; b >= 0; b = this.lru.next(b)) {
      if (seen[b] !== 0) return `block ${b} is both free and inactive, or on the LRU twice`;
      seen[b] = 2;
      lru++;
      if (lru > cap) return "the LRU list has a cycle";
      if (this.refCount[b] !== 0 || this.blockHash[b] < 0)
        return `inactive block ${b} is referenced or unregistered`;
    }
    if (lru !== this.lru.size) return `LRU holds ${lru} blocks, counter says ${this.lru.size}`;
    for (let b = 0; b < cap; b++) {
      if (this.refCount[b] !== expectedRefs[b]) {
        return `block ${b} has ${this.refCount[b]} references, its owners hold ${expectedRefs[b]}`;
      }
      if (seen[b] === 0 && this.refCount[b] <= 0)
        return `block ${b} is lost (neither free, inactive nor active)`;
      if (seen[b] !== 0 && this.refCount[b] > 0) return `active block ${b} is also free or inactive`;
      const h = this.blockHash[b];
      if (h >= 0 && this.byHash.get(h) !== b) return `registered block ${b} is not found under its hash`;
    }
    return null;
  }

  /** Registered hash of a block or -1 (tests and diagnostics). */
  hashOf(block: number): number {
    return this.blockHash[block];
  }
}
