import { type FifoLink, transferOverLinks } from "./linkFifo.js";
import { LruBlockSet } from "./lruBlockSet.js";

/** The disk tier's links (decimal GB/s), from `kv_cache.g3_offload`. */
export interface DiskTierLinks {
  readonly readBandwidthGBps: number;
  readonly writeBandwidthGBps: number;
  readonly latencyToFirstByteMs: number;
  /** The shared storage backend of a cluster-shared tier; null for a tier per worker. */
  readonly sharedReadBandwidthGBps: number | null;
  readonly sharedWriteBandwidthGBps: number | null;
}

/** One writer's or reader's own link to the disk tier. */
export type DiskLink = FifoLink;

/** Reads or writes of the tier: jobs submitted, and per job its submit and end times. */
class DiskJobs {
  submitted = 0;
  private starts = new Float64Array(64);
  private ends = new Float64Array(64);
  private bytesOf = new Float64Array(64);

  add(submitMs: number, endMs: number, bytes: number): void {
    if (this.submitted === this.ends.length) {
      const grow = (a: Float64Array) => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.starts = grow(this.starts);
      this.ends = grow(this.ends);
      this.bytesOf = grow(this.bytesOf);
    }
    this.starts[this.submitted] = submitMs;
    this.ends[this.submitted] = endMs;
    this.bytesOf[this.submitted] = bytes;
    this.submitted++;
  }

  /** The reference's `read`/`write` I/O statistics as of `endMs` (jobs still moving are not completed). */
  statsAt(endMs: number): DiskIoStats {
    let completed = 0;
    let bytes = 0;
    let transfer = 0;
    for (let i = 0; i < this.submitted; i++) {
      if (this.ends[i] > endMs) continue;
      completed++;
      bytes += this.bytesOf[i];
      transfer += this.ends[i] - this.starts[i];
    }
    return {
      submitted_jobs: this.submitted,
      completed_jobs: completed,
      cancelled_jobs: 0,
      completed_bytes: bytes,
      transfer_ms: transfer,
    };
  }
}

export interface DiskIoStats {
  submitted_jobs: number;
  completed_jobs: number;
  cancelled_jobs: number;
  completed_bytes: number;
  transfer_ms: number;
}

/**
 * The disk KV tier (G3; LMCache's local-disk backend, Dynamo KVBM's disk pool; docs/offload.md
 * "Disk tier") behind one or more host tiers: blocks the host tier evicts are written here (one
 * job per block, on the writer's own link and, for cluster-shared storage, the shared backend,
 * each a FIFO), and are readable once their write has landed. A request whose prefix continues
 * past its GPU and host hits into this tier reads those blocks back to host memory, then loads
 * them to the GPU with its host blocks. LRU-evicted at `capacity` blocks.
 */
export class DiskKvTier {
  private readonly blocks: LruBlockSet;
  /** Per slot: when its write lands (readable from then), and which writer wrote it. */
  private readonly readyAtMs: Float64Array;
  private readonly writerOf: Int32Array;
  /** The storage backend's write and read sides (cluster-shared storage only). */
  private readonly sharedWrite: FifoLink = { freeAtMs: 0 };
  private readonly sharedRead: FifoLink = { freeAtMs: 0 };
  private readonly reads = new DiskJobs();
  private readonly writes = new DiskJobs();
  // Counters over the tier's life (the reference's `g3_offload` keys, docs/offload.md).
  lookupProbes = 0;
  lookupHits = 0;
  lookupPending = 0;
  evictions = 0;
  crossWorkerReadBlocks = 0;
  readBlocks = 0;

  constructor(
    capacity: number,
    readonly spec: DiskTierLinks,
    /** KV bytes of one block on one GPU: what each write and read moves. */
    readonly bytesPerBlock: number,
  ) {
    this.blocks = new LruBlockSet(capacity, "disk KV");
    this.readyAtMs = new Float64Array(capacity);
    this.writerOf = new Int32Array(capacity);
  }

  get capacity(): number {
    return this.blocks.capacity;
  }

  get residentBlocks(): number {
    return this.blocks.size;
  }

  /**
   * Writes a block a host tier evicted at `nowMs` (`writer` identifies that tier's worker, whose
   * `link` carries it); a block already here is refreshed instead.
   */
  spill(hash: number, nowMs: number, writer: number, link: DiskLink): void {
    const blocks = this.blocks;
    const existing = blocks.slotOf(hash);
    if (existing >= 0) {
      blocks.touch(existing);
      return;
    }
    const slot = blocks.insert(hash);
    if (blocks.evictedHash >= 0) this.evictions++;
    const s = this.spec;
    const bytes = this.bytesPerBlock;
    const done = transferOverLinks(
      nowMs,
      bytes,
      s.latencyToFirstByteMs,
      link,
      s.writeBandwidthGBps,
      this.sharedWrite,
      s.sharedWriteBandwidthGBps,
    );
    this.readyAtMs[slot] = done;
    this.writerOf[slot] = writer;
    this.writes.add(nowMs, done, bytes);
  }

  /**
   * Whether `hash` can be read at `nowMs` (resident and its write landed); counts the probe as the
   * reference does (a block still being written is a pending probe, not a hit).
   */
  probe(hash: number, nowMs: number): boolean {
    this.lookupProbes++;
    const slot = this.blocks.slotOf(hash);
    if (slot < 0) return false;
    if (this.readyAtMs[slot] > nowMs) {
      this.lookupPending++;
      return false;
    }
    this.lookupHits++;
    return true;
  }

  /** `hash` is being read by `reader`: it becomes the newest entry (and may be another worker's). */
  touchRead(hash: number, reader: number): void {
    const slot = this.blocks.slotOf(hash);
    if (slot < 0) return;
    this.blocks.touch(slot);
    if (this.writerOf[slot] !== reader) this.crossWorkerReadBlocks++;
  }

  /**
   * Schedules reading `blocks` blocks at `nowMs` over the reader's `link` (and the shared backend
   * of cluster-shared storage); returns when the last byte is in host memory.
   */
  scheduleRead(nowMs: number, blocks: number, link: DiskLink): number {
    const s = this.spec;
    const bytes = blocks * this.bytesPerBlock;
    const done = transferOverLinks(
      nowMs,
      bytes,
      s.latencyToFirstByteMs,
      link,
      s.readBandwidthGBps,
      this.sharedRead,
      s.sharedReadBandwidthGBps,
    );
    this.readBlocks += blocks;
    this.reads.add(nowMs, done, bytes);
    return done;
  }

  /** Blocks whose write had not landed at `endMs`. */
  pendingBlocksAt(endMs: number): number {
    let n = 0;
    for (let slot = 0; slot < this.blocks.size; slot++) if (this.readyAtMs[slot] > endMs) n++;
    return n;
  }

  readStatsAt(endMs: number): DiskIoStats {
    return this.reads.statsAt(endMs);
  }

  writeStatsAt(endMs: number): DiskIoStats {
    return this.writes.statsAt(endMs);
  }
}
