/**
 * SGLang's radix-tree prefix cache at page granularity (`ai-dynamo/dynamo@a63cdfc:lib/mocker/src/scheduler/sglang/core.rs`, the reference mocker's
 * `cache/radix_cache.rs`), with the page pool it draws from.
 *
 * A node is one cached page, keyed by its chained page hash (the router's hash of the prefix up to
 * and including the page, so a hash names its whole path); its parent is the page before it. The
 * reference compresses single-child chains into one edge, but it evicts and splits them a page at
 * a time, so an uncompressed tree caches, matches and evicts the same pages.
 *
 * `lockRef` counts the requests whose cached prefix runs through a node (a lock walks to the root):
 * locked nodes are protected, unlocked ones evictable (`evictablePages`, internal ones included).
 * Eviction removes unlocked leaves oldest first by (last access, node id), a parent becoming a
 * leaf in its turn. Access times come from a logical clock advanced once per operation (the
 * reference reads the wall clock; only the order matters). The leaf order lives in a min-heap
 * with lazy deletion: an entry counts only while its node is an evictable leaf last accessed at
 * the entry's time.
 *
 * The pool counts pages only: `freePages` + tree pages + pages requests hold privately (partial
 * pages and pages not yet inserted) = `capacity`.
 */
import { MinHeap } from "../util/minHeap.js";
import type { KvEventListener } from "./kvBlockPool.js";

const NONE = -1;

export class RadixCache {
  /** Pages in the pool. */
  readonly capacity: number;
  freePages: number;
  /** Tree pages with lock_ref 0 (evictable, internal ones included). */
  evictablePages = 0;
  /** Pages in the tree. */
  treePages = 0;
  private readonly byHash = new Map<number, number>();
  private parent = new Int32Array(64);
  private hash = new Float64Array(64);
  private lockRef = new Int32Array(64);
  private children = new Int32Array(64);
  private lastAccess = new Float64Array(64);
  private alive = new Uint8Array(64);
  private nodeCount = 0;
  private readonly freeIds: number[] = [];
  private clock = 0;
  /** Evictable leaves by (last access, node id), with lazy deletion (`evict` skips stale entries). */
  private leaves = new MinHeap(64);
  private listener: KvEventListener | null = null;

  constructor(capacityPages: number) {
    if (!Number.isInteger(capacityPages) || capacityPages <= 0) {
      throw new RangeError("KV capacity must be > 0 pages");
    }
    this.capacity = capacityPages;
    this.freePages = capacityPages;
  }

  /** Router events: a page entering (`Stored`) or leaving (`Removed`) the tree. */
  setListener(listener: KvEventListener | null): void {
    this.listener = listener;
  }

  /** Pages in use by requests (not free, not evictable): what the time series and INV-2 read. */
  get activeBlocks(): number {
    return this.capacity - this.freePages - this.evictablePages;
  }

  /** Pages a request could take now: free plus evictable. */
  get availableBlocks(): number {
    return this.freePages + this.evictablePages;
  }

  /** Advances the access clock: the nodes an operation touches share its time. */
  tick(): void {
    this.clock++;
  }

  /**
   * The deepest node matching hashes[offset .. offset+count) from the root, or NONE; `touch`
   * refreshes the access time of every matched node. `matchedPages` gets the match length.
   */
  match(hashes: ArrayLike<number>, offset: number, count: number, touch: boolean): number {
    let node = NONE;
    let k = 0;
    while (k < count) {
      const next = this.byHash.get(hashes[offset + k]);
      if (next === undefined || this.parent[next] !== node) break;
      node = next;
      k++;
      if (touch) this.touch(node);
    }
    this.matchedPages = k;
    return node;
  }

  /** Pages matched by the latest `match`. */
  matchedPages = 0;

  /** The cached child of `node` (NONE = the root) for page hash `h`, or NONE. */
  child(node: number, h: number): number {
    const c = this.byHash.get(h);
    return c !== undefined && this.parent[c] === node ? c : NONE;
  }

  /**
   * Inserts a page with hash `h` under `node` (NONE = the root), taking over a page the caller
   * held privately; returns the new node. The caller checks `child` first: an existing node
   * means the page is already cached (the caller frees its own copy).
   */
  insert(node: number, h: number): number {
    const id = this.newNode();
    this.parent[id] = node;
    this.hash[id] = h;
    this.lockRef[id] = 0;
    this.children[id] = 0;
    this.lastAccess[id] = this.clock;
    this.alive[id] = 1;
    this.byHash.set(h, id);
    if (node !== NONE) this.children[node]++;
    this.treePages++;
    this.evictablePages++;
    this.pushLeaf(id);
    this.listener?.onBlockStored(h);
    return id;
  }

  /** Locks the path from `node` to the root (one more request relies on it). */
  lock(node: number): void {
    for (let n = node; n !== NONE; n = this.parent[n]) {
      if (this.lockRef[n]++ === 0) this.evictablePages--;
    }
  }

  /** Unlocks the path from `node` to the root; nodes left unlocked become evictable. */
  unlock(node: number): void {
    for (let n = node; n !== NONE; n = this.parent[n]) {
      if (--this.lockRef[n] === 0) {
        this.evictablePages++;
        if (this.children[n] === 0) this.pushLeaf(n);
      }
      if (this.lockRef[n] < 0) throw new Error(`internal: radix node ${n} unlocked below zero`);
    }
  }

  /** Takes `pages` free pages, evicting unlocked leaves as needed; false (nothing taken) if they do not fit. */
  allocate(pages: number): boolean {
    if (pages > this.freePages + this.evictablePages) return false;
    if (pages > this.freePages) this.evict(pages - this.freePages);
    if (pages > this.freePages) return false;
    this.freePages -= pages;
    return true;
  }

  /** Returns privately held pages to the pool. */
  free(pages: number): void {
    this.freePages += pages;
    if (this.freePages > this.capacity) throw new Error("internal: more pages freed than the pool holds");
  }

  /** Evicts unlocked leaves, oldest first, until `pages` pages are free or nothing is evictable. */
  evict(pages: number): void {
    let freed = 0;
    // (`this.leaves` is re-read each time: a removal may rebuild it.)
    while (freed < pages && this.leaves.size > 0) {
      const time = this.leaves.peekTime();
      const id = this.leaves.peekPayload();
      this.leaves.pop();
      // An entry counts while its node is still an evictable leaf last accessed at its time.
      if (!this.isEvictableLeaf(id) || this.lastAccess[id] !== time) continue;
      this.removeNode(id);
      freed++;
    }
  }

  /**
   * Invariant check (tests): the pool's pages add up, and every node's lock count is exactly the
   * number of `lockedNodes` (one entry per request lock) whose root path runs through it.
   */
  audit(lockedNodes: readonly number[], privatePages: number): string | null {
    if (this.freePages + this.treePages + privatePages !== this.capacity) {
      return `pages: ${this.freePages} free + ${this.treePages} cached + ${privatePages} private ≠ ${this.capacity}`;
    }
    const expected = new Int32Array(this.nodeCount);
    for (const node of lockedNodes) for (let n = node; n !== NONE; n = this.parent[n]) expected[n]++;
    let evictable = 0;
    for (let n = 0; n < this.nodeCount; n++) {
      if (this.alive[n] === 0) continue;
      if (expected[n] !== this.lockRef[n]) {
        return `radix node ${n}: lock_ref ${this.lockRef[n]}, ${expected[n]} requests hold it`;
      }
      if (this.lockRef[n] === 0) evictable++;
    }
    if (evictable !== this.evictablePages) {
      return `evictable pages ${this.evictablePages} counted, ${evictable} unlocked nodes`;
    }
    return null;
  }

  private isEvictableLeaf(id: number): boolean {
    return this.alive[id] === 1 && this.lockRef[id] === 0 && this.children[id] === 0;
  }

  private touch(id: number): void {
    this.lastAccess[id] = this.clock;
    if (this.isEvictableLeaf(id)) this.pushLeaf(id);
  }

  private removeNode(id: number): void {
    const p = this.parent[id];
    const h = this.hash[id];
    this.byHash.delete(h);
    this.alive[id] = 0;
    this.treePages--;
    this.evictablePages--;
    this.freePages++;
    this.freeIds.push(id);
    if (p !== NONE && --this.children[p] === 0 && this.lockRef[p] === 0) this.pushLeaf(p);
    this.listener?.onBlockRemoved(h);
  }

  private newNode(): number {
    if (this.freeIds.length > 0) return this.freeIds.pop()!;
    const id = this.nodeCount++;
    if (id === this.parent.length) this.grow(2 * id);
    return id;
  }

  private grow(size: number): void {
    const grown = <T extends Int32Array | Float64Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(size);
      b.set(a);
      return b;
    };
    this.parent = grown(this.parent, (n) => new Int32Array(n));
    this.hash = grown(this.hash, (n) => new Float64Array(n));
    this.lockRef = grown(this.lockRef, (n) => new Int32Array(n));
    this.children = grown(this.children, (n) => new Int32Array(n));
    this.lastAccess = grown(this.lastAccess, (n) => new Float64Array(n));
    this.alive = grown(this.alive, (n) => new Uint8Array(n));
  }

  // ---- evictable-leaf heap ----

  /** Indexes `id` as an evictable leaf at its current access time (older entries of it go stale). */
  private pushLeaf(id: number): void {
    this.leaves.push(this.lastAccess[id], id, id);
    // Stale entries accumulate with touches: rebuild from the live leaves when they dominate.
    if (this.leaves.size > 64 && this.leaves.size > 4 * this.treePages) this.rebuildHeap();
  }

  private rebuildHeap(): void {
    this.leaves = new MinHeap(this.treePages + 16);
    // At most treePages entries result, so pushLeaf's rebuild check cannot fire again here.
    for (let n = 0; n < this.nodeCount; n++) if (this.isEvictableLeaf(n)) this.pushLeaf(n);
  }
}

export const NO_NODE = NONE;
