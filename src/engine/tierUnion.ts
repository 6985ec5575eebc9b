import type { KvEventListener } from "./kvBlockPool.js";

/**
 * Merges a rank's GPU and host-tier KV events into the router's view: a block is stored when the
 * first tier gets it and removed when the last one drops it.
 */
export class TierUnion {
  /** Per hash: bit 1 = on the GPU, bit 2 = in the host tier. */
  private readonly where = new Map<number, number>();
  readonly gpu: KvEventListener;
  readonly host: KvEventListener;

  constructor(private readonly out: KvEventListener) {
    this.gpu = { onBlockStored: (h) => this.add(h, 1), onBlockRemoved: (h) => this.drop(h, 1) };
    this.host = { onBlockStored: (h) => this.add(h, 2), onBlockRemoved: (h) => this.drop(h, 2) };
  }

  private add(hash: number, bit: number): void {
    const before = this.where.get(hash) ?? 0;
    this.where.set(hash, before | bit);
    if (before === 0) this.out.onBlockStored(hash);
  }

  private drop(hash: number, bit: number): void {
    const before = this.where.get(hash) ?? 0;
    const after = before & ~bit;
    if (after === 0) {
      this.where.delete(hash);
      if (before !== 0) this.out.onBlockRemoved(hash);
    } else {
      this.where.set(hash, after);
    }
  }
}
