/**
 * The host KV tier (docs/offload.md): its LRU and link timing, and an engine that loads a prefix
 * back from it instead of recomputing it, keeping the loading request out of the batch until the
 * blocks land.
 */
import { describe, expect, it } from "vitest";
import { DiskKvTier, type DiskTierLinks } from "../../src/engine/diskKvTier.js";
import { HostKvTier, type HostTierLinks } from "../../src/engine/hostKvTier.js";
import { TierUnion } from "../../src/engine/tierUnion.js";
import type { EngineHostOffload } from "../../src/engine/workerEngine.js";
import { EngineHarness, engineConfig } from "../helpers/engineHarness.js";

const LINKS: HostTierLinks = {
  h2dBandwidthGBps: 1, // 1 byte per ns: 1e6 bytes per ms
  d2hBandwidthGBps: 1,
  latencyToFirstByteMs: 0.5,
  sharedH2dBandwidthGBps: null,
  sharedD2hBandwidthGBps: null,
};

describe("HostKvTier", () => {
  it("keeps the most recently stored or read blocks and evicts the oldest", () => {
    const t = new HostKvTier(3, LINKS);
    for (const h of [1, 2, 3]) t.store(h);
    t.touch(1); // read: newest now
    t.store(4); // evicts 2, the oldest
    expect([1, 2, 3, 4].map((h) => t.has(h))).toEqual([true, false, true, true]);
    t.store(3); // already there: refreshed, nothing stored or evicted
    expect(t.storedBlocks).toBe(4);
    expect(t.evictedBlocks).toBe(1);
    t.store(5); // evicts 1 (3 was refreshed after 1's read)
    expect(t.has(1)).toBe(false);
    expect(t.residentBlocks).toBe(3);
  });

  it("serializes loads on the GPU's link: time to first byte plus bytes over bandwidth", () => {
    const t = new HostKvTier(8, LINKS);
    const link = { freeAtMs: 0 };
    // 2 blocks of 1 MB at 1 GB/s: 2 ms on the link, landing 0.5 ms after it.
    expect(t.scheduleLoad(10, 2, 1e6, link)).toBeCloseTo(12.5, 9);
    // Requested at 11 while the link is busy until 12: it starts then.
    expect(t.scheduleLoad(11, 1, 1e6, link)).toBeCloseTo(13.5, 9);
    expect(t.loads).toBe(2);
    expect(t.loadedBlocks).toBe(3);
    expect(t.loadWaitMs).toBeCloseTo(2.5 + 2.5, 9);
  });

  it("a cluster-shared tier also queues every load on its shared link", () => {
    const t = new HostKvTier(8, { ...LINKS, sharedH2dBandwidthGBps: 0.5, sharedD2hBandwidthGBps: 0.5 });
    const a = { freeAtMs: 0 };
    const b = { freeAtMs: 0 };
    // The shared link is the slower one (0.5 GB/s): 2 ms per MB, and two workers take turns on it.
    expect(t.scheduleLoad(0, 1, 1e6, a)).toBeCloseTo(2.5, 9);
    expect(t.scheduleLoad(0, 1, 1e6, b)).toBeCloseTo(4.5, 9);
  });
});

describe("TierUnion: the router's view of a rank's two tiers", () => {
  it("stores a block when the first tier gets it and removes it when the last one drops it", () => {
    const events: string[] = [];
    const u = new TierUnion({
      onBlockStored: (h) => events.push(`+${h}`),
      onBlockRemoved: (h) => events.push(`-${h}`),
    });
    u.gpu.onBlockStored(7);
    u.host.onBlockStored(7);
    u.gpu.onBlockRemoved(7); // still in host memory: the router keeps it
    u.host.onBlockRemoved(7);
    u.host.onBlockStored(8);
    expect(events).toEqual(["+7", "-7", "+8"]);
  });
});

/**
 * An engine with 4-token blocks, `gpuBlocks` of GPU cache and a host tier of `hostBlocks` (with a
 * disk tier behind it when given); loads are recorded.
 */
function offloadHarness(
  gpuBlocks: number,
  prompts: number[][],
  hostBlocks = 64,
  disk: DiskKvTier | null = null,
) {
  const tier = new HostKvTier(hostBlocks, LINKS);
  tier.disk = disk;
  const loads: { req: number; at: number }[] = [];
  const host: EngineHostOffload = {
    tier,
    bytesPerBlock: 1e6,
    link: { freeAtMs: 0 },
    disk,
    diskLink: { freeAtMs: 0 },
    diskReader: 0,
    scheduleLoadEnd: (req, at) => loads.push({ req, at }),
  };
  const h = new EngineHarness(engineConfig({ numGpuBlocks: gpuBlocks, hostOffload: host }), prompts);
  return { h, tier, loads };
}

/** r0 caches its prefix, then r1 fills the whole GPU cache: r0's prefix is left only in host memory. */
function evictFirstPrefix(h: EngineHarness): void {
  h.submit(0, 17, 1);
  h.drain();
  h.submit(1, 31, 1);
  h.drain();
}

describe("an engine with a host tier", () => {
  // r0 and r2 share a 4-block prefix; r1 fills the GPU cache in between and evicts it.
  const prompts = [
    [1, 2, 3, 4],
    [11, 12, 13, 14, 15, 16, 17],
    [1, 2, 3, 4],
  ];

  it("offloads what the GPU caches and loads an evicted prefix back instead of recomputing it", () => {
    const { h, tier, loads } = offloadHarness(8, prompts);
    evictFirstPrefix(h);
    expect([1, 2, 3, 4].every((x) => tier.has(x))).toBe(true);
    // r1's 8 blocks took the whole GPU cache: r0's prefix survives only in host memory.
    expect(h.engine.pool.lookup(1)).toBe(-1);
    h.submit(2, 17, 2);
    const admitAt = h.now;
    const first = h.pass();
    // The pass that admitted it started the load and left it out of the batch.
    expect(first.signals).toEqual([]);
    expect(loads).toEqual([{ req: 2, at: admitAt + 0.5 + 4 }]);
    expect(h.engine.hasWork()).toBe(false);
    expect(h.engine.isIdle()).toBe(false);
    expect(h.engine.auditKv([])).toBeNull();
    h.now = loads[0]!.at;
    expect(h.engine.completeLoad(2)).toBe(true);
    expect(h.engine.hasWork()).toBe(true);
    h.drain();
    // Reused: the 16 loaded tokens (only the last prompt token is computed).
    expect(h.admissions.at(-1)).toMatchObject({ req: 2, reused: 16 });
    expect(tier.loads).toBe(1);
    expect(tier.loadedBlocks).toBe(4);
  });

  it("a request cancelled during its load gives its blocks back, and its late load is ignored", () => {
    const { h, loads } = offloadHarness(8, prompts);
    evictFirstPrefix(h);
    h.submit(2, 17, 2);
    h.pass();
    expect(loads).toHaveLength(1);
    expect(h.engine.cancel(2)).toBe(true);
    expect(h.engine.pool.activeBlocks).toBe(0);
    expect(h.engine.isIdle()).toBe(true);
    expect(h.engine.completeLoad(2)).toBe(false);
    expect(h.engine.auditKv([])).toBeNull();
  });

  it("without a host tier the same requests recompute the evicted prefix", () => {
    const h = new EngineHarness(engineConfig({ numGpuBlocks: 8 }), prompts);
    evictFirstPrefix(h);
    h.submit(2, 17, 2);
    h.drain();
    expect(h.admissions.at(-1)).toMatchObject({ req: 2, reused: 0 });
  });
});

const DISK: DiskTierLinks = {
  readBandwidthGBps: 0.5, // 2 ms per 1 MB block
  writeBandwidthGBps: 1,
  latencyToFirstByteMs: 0.1,
  sharedReadBandwidthGBps: null,
  sharedWriteBandwidthGBps: null,
};

describe("DiskKvTier (G3)", () => {
  it("writes spilled blocks one after another on the writer's link; a block is readable once its write lands", () => {
    const d = new DiskKvTier(4, DISK, 1e6);
    const link = { freeAtMs: 0 };
    d.spill(1, 10, 0, link); // [10, 11) on the link, lands at 11.1
    d.spill(2, 10, 0, link); // waits for the link: [11, 12), lands at 12.1
    expect(d.probe(1, 11)).toBe(false); // still being written: a pending probe
    expect(d.probe(1, 11.1)).toBe(true);
    expect(d.probe(2, 12)).toBe(false);
    expect(d.probe(3, 20)).toBe(false); // never written: a miss
    expect([d.lookupProbes, d.lookupHits, d.lookupPending]).toEqual([4, 1, 2]);
    d.spill(1, 13, 0, link); // already there: refreshed, not written again
    const w = d.writeStatsAt(100);
    expect(w).toMatchObject({
      submitted_jobs: 2,
      completed_jobs: 2,
      cancelled_jobs: 0,
      completed_bytes: 2e6,
    });
    expect(w.transfer_ms).toBeCloseTo(1.1 + 2.1, 9);
    expect(d.writeStatsAt(11.5).completed_jobs).toBe(1);
    expect(d.pendingBlocksAt(11.5)).toBe(1);
  });

  it("evicts the least recently used block when full and counts reads of another worker's blocks", () => {
    const d = new DiskKvTier(
      2,
      { ...DISK, sharedReadBandwidthGBps: 0.25, sharedWriteBandwidthGBps: 10 },
      1e6,
    );
    const a = { freeAtMs: 0 };
    const b = { freeAtMs: 0 };
    d.spill(1, 0, 0, a);
    d.spill(2, 0, 1, b);
    d.touchRead(1, 1); // worker 1 reads worker 0's block: newest now
    d.spill(3, 5, 0, a); // evicts 2
    expect([d.probe(1, 10), d.probe(2, 10), d.probe(3, 10)]).toEqual([true, false, true]);
    expect(d.evictions).toBe(1);
    expect(d.crossWorkerReadBlocks).toBe(1);
    // The shared backend (0.25 GB/s: 4 ms per block) is slower than either worker's link, and the
    // two readers take turns on it.
    expect(d.scheduleRead(20, 1, a)).toBeCloseTo(24.1, 9);
    expect(d.scheduleRead(20, 1, b)).toBeCloseTo(28.1, 9);
  });
});

describe("an engine with host and disk tiers", () => {
  const prompts = [
    [1, 2, 3, 4],
    [11, 12, 13, 14, 15, 16, 17],
    [1, 2, 3, 4],
  ];

  it("reads a prefix the host tier evicted back from disk, through host memory, before the request runs", () => {
    // 8 host blocks: r1's 7 blocks push r0's oldest three (1, 2, 3) out of host memory to disk.
    const disk = new DiskKvTier(64, DISK, 1e6);
    const { h, tier, loads } = offloadHarness(8, prompts, 8, disk);
    evictFirstPrefix(h);
    expect([1, 2, 3, 4].map((x) => tier.has(x))).toEqual([false, false, false, true]);
    expect(disk.residentBlocks).toBe(3);
    h.now += 50; // the writes have landed
    h.submit(2, 17, 2);
    const admitAt = h.now;
    h.pass();
    // Blocks 1-3 from disk: 0.1 ms + 3 × 2 ms; then all 4 over the host link: 0.5 ms + 4 ms.
    expect(loads).toHaveLength(1);
    expect(loads[0]!.at).toBeCloseTo(admitAt + 6.1 + 4.5, 9);
    expect(disk.readBlocks).toBe(3);
    h.now = loads[0]!.at;
    expect(h.engine.completeLoad(2)).toBe(true);
    h.drain();
    expect(h.admissions.at(-1)).toMatchObject({ req: 2, reused: 16 });
    expect(h.engine.auditKv([])).toBeNull();
    // Staged through host memory: the loaded blocks are host-resident again.
    expect([1, 2, 3].every((x) => tier.has(x))).toBe(true);
  });

  it("a block still being written to disk is not read: the prefix run ends there and the rest is recomputed", () => {
    const disk = new DiskKvTier(64, { ...DISK, writeBandwidthGBps: 0.001 }, 1e6); // 1 s per block
    const { h, loads } = offloadHarness(8, prompts, 8, disk);
    evictFirstPrefix(h);
    h.submit(2, 17, 2);
    h.drain();
    expect(loads).toEqual([]);
    expect(h.admissions.at(-1)).toMatchObject({ req: 2, reused: 0 });
    expect(disk.lookupPending).toBeGreaterThan(0);
  });
});
