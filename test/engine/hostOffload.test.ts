/**
 * The host KV tier (docs/offload.md): its LRU and link timing, and an engine that loads a prefix
 * back from it instead of recomputing it, keeping the loading request out of the batch until the
 * blocks land.
 */
import { describe, expect, it } from "vitest";
import { HostKvTier, type HostTierLinks } from "../../src/engine/hostKvTier.js";
import { TierUnion } from "../../src/engine/tierUnion.js";
import type { EngineHostOffload } from "../../src/engine/vllmEngine.js";
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

/** An engine with 4-token blocks, `gpuBlocks` of GPU cache and a host tier; loads are recorded. */
function offloadHarness(gpuBlocks: number, prompts: number[][]) {
  const tier = new HostKvTier(64, LINKS);
  const loads: { req: number; at: number }[] = [];
  const host: EngineHostOffload = {
    tier,
    bytesPerBlock: 1e6,
    link: { freeAtMs: 0 },
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
