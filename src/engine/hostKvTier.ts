import { LruList } from "../util/lruList.js";
import { BlockHashIndex } from "./blockHashIndex.js";
import type { KvEventListener } from "./kvBlockPool.js";

/**
 * The host-memory KV tier behind one or more GPU caches (G2; vLLM's OffloadingConnector to CPU,
 * LMCache's local CPU backend; docs/offload.md): a fixed number of block slots holding block
 * hashes, LRU-evicted. Every block the GPU cache registers is offloaded here (stores are
 * asynchronous and overlap compute); a request whose prefix continues past its GPU hits into this
 * tier loads those blocks back before it prefills the rest.
 *
 * Transfers serialize on two links, each a FIFO "free at" clock: the worker's own host↔device
 * link (`perWorker`, one per engine that uses the tier) and, for a tier shared by a cluster, the
 * shared link. A load costs the time to first byte plus bytes / bandwidth on each link it crosses.
 */
export class HostKvTier {
  readonly capacity: number;
  private readonly slotHash: Float64Array;
  private readonly lru: LruList;
  private used = 0;
  private readonly byHash: BlockHashIndex;
  /** When the shared link (cluster-shared tier) is next free, ms. */
  private sharedFreeAtMs = 0;
  private listener: KvEventListener | null = null;
  // Counters over the tier's life (docs/offload.md "What it reports").
  storedBlocks = 0;
  evictedBlocks = 0;
  loadedBlocks = 0;
  loads = 0;
  /** Σ (load end − load request) over loads, ms. */
  loadWaitMs = 0;

  constructor(
    capacity: number,
    readonly spec: HostTierLinks,
  ) {
    if (!Number.isInteger(capacity) || capacity <= 0)
      throw new RangeError("host KV capacity must be > 0 blocks");
    this.capacity = capacity;
    this.slotHash = new Float64Array(capacity).fill(-1);
    this.lru = new LruList(capacity);
    this.byHash = new BlockHashIndex(capacity);
  }

  /** Sends stored/removed events of this tier to `listener` (the router's view, when it sees host hits). */
  setListener(listener: KvEventListener | null): void {
    this.listener = listener;
  }

  get residentBlocks(): number {
    return this.used;
  }

  has(hash: number): boolean {
    return this.byHash.get(hash) >= 0;
  }

  /** Offloads a block the GPU just registered (or refreshes it as the newest entry). */
  store(hash: number): void {
    let slot = this.byHash.get(hash);
    if (slot >= 0) {
      this.lru.remove(slot);
      this.lru.pushTail(slot);
      return;
    }
    if (this.used < this.capacity) {
      slot = this.used++;
    } else {
      slot = this.lru.head;
      this.lru.remove(slot);
      const old = this.slotHash[slot];
      this.byHash.delete(old);
      this.evictedBlocks++;
      if (this.listener !== null) this.listener.onBlockRemoved(old);
    }
    this.slotHash[slot] = hash;
    this.byHash.setIfAbsent(hash, slot);
    this.lru.pushTail(slot);
    this.storedBlocks++;
    if (this.listener !== null) this.listener.onBlockStored(hash);
  }

  /** A prefix hit: the block becomes the newest entry (it is being read). */
  touch(hash: number): void {
    const slot = this.byHash.get(hash);
    if (slot < 0) return;
    this.lru.remove(slot);
    this.lru.pushTail(slot);
  }

  /**
   * Schedules loading `blocks` blocks of `bytesPerBlock` into a GPU whose own link is free at
   * `link.freeAtMs`, requested at `nowMs`; returns when the last byte lands and advances the links.
   */
  scheduleLoad(nowMs: number, blocks: number, bytesPerBlock: number, link: WorkerLink): number {
    const s = this.spec;
    const bytes = blocks * bytesPerBlock;
    const own = (bytes / (s.h2dBandwidthGBps * 1e9)) * 1000;
    let start = Math.max(nowMs, link.freeAtMs);
    let busy = own;
    if (s.sharedH2dBandwidthGBps !== null) {
      start = Math.max(start, this.sharedFreeAtMs);
      busy = Math.max(own, (bytes / (s.sharedH2dBandwidthGBps * 1e9)) * 1000);
      this.sharedFreeAtMs = start + busy;
    }
    link.freeAtMs = start + busy;
    const done = start + s.latencyToFirstByteMs + busy;
    this.loads++;
    this.loadedBlocks += blocks;
    this.loadWaitMs += done - nowMs;
    return done;
  }
}

/** The tier's links (decimal GB/s), from `kv_cache.host_offload`. */
export interface HostTierLinks {
  readonly h2dBandwidthGBps: number;
  readonly d2hBandwidthGBps: number;
  readonly latencyToFirstByteMs: number;
  /** The shared link of a cluster-shared tier; null for a tier per worker. */
  readonly sharedH2dBandwidthGBps: number | null;
  readonly sharedD2hBandwidthGBps: number | null;
}

/** One GPU's host↔device link: when it is next free for a load, ms. */
export interface WorkerLink {
  freeAtMs: number;
}
