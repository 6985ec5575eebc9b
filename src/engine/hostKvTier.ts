import type { DiskKvTier, DiskLink } from "./diskKvTier.js";
import type { KvEventListener } from "./kvBlockPool.js";
import { type FifoLink, transferOverLinks } from "./linkFifo.js";
import { LruBlockSet } from "./lruBlockSet.js";

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
  private readonly blocks: LruBlockSet;
  /** The shared link of a cluster-shared tier. */
  private readonly sharedLink: FifoLink = { freeAtMs: 0 };
  private listener: KvEventListener | null = null;
  /** The disk (G3) tier its evicted blocks spill to, or null (docs/offload.md "Disk tier"). */
  disk: DiskKvTier | null = null;
  /** Its id as a writer to the disk tier, and its own write link there. */
  diskWriter = 0;
  readonly diskLink: DiskLink = { freeAtMs: 0 };
  /**
   * The virtual time of the latest pass or load of an engine using this tier (set by the engine):
   * when a store evicts a block, its spill to disk is written from then.
   */
  nowMs = 0;
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
    this.blocks = new LruBlockSet(capacity, "host KV");
    this.capacity = capacity;
  }

  /** Sends stored/removed events of this tier to `listener` (the router's view, when it sees host hits). */
  setListener(listener: KvEventListener | null): void {
    this.listener = listener;
  }

  get residentBlocks(): number {
    return this.blocks.size;
  }

  has(hash: number): boolean {
    return this.blocks.slotOf(hash) >= 0;
  }

  /** Offloads a block the GPU just registered (or refreshes it as the newest entry). */
  store(hash: number): void {
    const blocks = this.blocks;
    const slot = blocks.slotOf(hash);
    if (slot >= 0) {
      blocks.touch(slot);
      return;
    }
    blocks.insert(hash);
    const old = blocks.evictedHash;
    if (old >= 0) {
      this.evictedBlocks++;
      if (this.listener !== null) this.listener.onBlockRemoved(old);
      // Spilled to the disk tier behind this one (write-back on eviction), when there is one.
      if (this.disk !== null) this.disk.spill(old, this.nowMs, this.diskWriter, this.diskLink);
    }
    this.storedBlocks++;
    if (this.listener !== null) this.listener.onBlockStored(hash);
  }

  /** A prefix hit: the block becomes the newest entry (it is being read). */
  touch(hash: number): void {
    const slot = this.blocks.slotOf(hash);
    if (slot >= 0) this.blocks.touch(slot);
  }

  /**
   * Schedules loading `blocks` blocks of `bytesPerBlock` into a GPU whose own link is free at
   * `link.freeAtMs`, requested at `nowMs`; returns when the last byte lands and advances the links.
   */
  scheduleLoad(
    nowMs: number,
    blocks: number,
    bytesPerBlock: number,
    link: WorkerLink,
    /** When the load was asked for (before any disk read that staged its blocks); default `nowMs`. */
    requestedMs = nowMs,
  ): number {
    const s = this.spec;
    const done = transferOverLinks(
      nowMs,
      blocks * bytesPerBlock,
      s.latencyToFirstByteMs,
      link,
      s.h2dBandwidthGBps,
      this.sharedLink,
      s.sharedH2dBandwidthGBps,
    );
    this.loads++;
    this.loadedBlocks += blocks;
    this.loadWaitMs += done - requestedMs;
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
export type WorkerLink = FifoLink;
