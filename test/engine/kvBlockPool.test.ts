import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { KvBlockPool } from "../../src/engine/kvBlockPool.js";

describe("KvBlockPool", () => {
  it("hands out free blocks first, then evicts the least recently released cached block", () => {
    const pool = new KvBlockPool(3);
    const a = pool.allocate();
    const b = pool.allocate();
    const c = pool.allocate();
    expect([a, b, c]).toEqual([0, 1, 2]);
    expect(pool.allocate()).toBe(-1);
    pool.register(a, 100);
    pool.register(b, 200);
    // c stays private: released straight to the free stack.
    pool.release(b);
    pool.release(a);
    pool.release(c);
    expect(pool.activeBlocks).toBe(0);
    expect(pool.inactiveBlocks).toBe(2);
    expect(pool.freeBlocks).toBe(1);
    expect(pool.lruOrder()).toEqual([b, a]);
    expect(pool.allocate()).toBe(c);
    // Next allocation evicts the LRU head (b, hash 200), which disappears from lookups.
    expect(pool.allocate()).toBe(b);
    expect(pool.lookup(200)).toBe(-1);
    expect(pool.lookup(100)).toBe(a);
    expect(pool.evictions).toBe(1);
  });

  it("shares a registered block between owners and keeps it active until the last release", () => {
    const pool = new KvBlockPool(2);
    const a = pool.allocate();
    pool.register(a, 7);
    pool.acquire(pool.lookup(7));
    pool.release(a);
    expect(pool.isActive(a)).toBe(true);
    pool.release(a);
    expect(pool.isActive(a)).toBe(false);
    expect(pool.inactiveBlocks).toBe(1);
    // A prefix hit on an inactive block reactivates it and takes it off the LRU list.
    pool.acquire(pool.lookup(7));
    expect(pool.inactiveBlocks).toBe(0);
    expect(pool.activeBlocks).toBe(1);
  });

  it("caches a second copy of a registered hash; the hash leaves with its last copy", () => {
    const pool = new KvBlockPool(4);
    const events: string[] = [];
    pool.setListener({
      onBlockStored: (h) => events.push(`stored ${h}`),
      onBlockRemoved: (h) => events.push(`removed ${h}`),
    });
    const [a, b, c] = [pool.allocate(), pool.allocate(), pool.allocate()];
    expect(pool.register(a, 5)).toBe(true);
    // Two requests computed the same block: the later copies are cached too, with no event.
    expect(pool.register(b, 5)).toBe(false);
    expect(pool.register(c, 5)).toBe(false);
    expect(events).toEqual(["stored 5"]);
    pool.release(b);
    pool.release(a);
    pool.release(c);
    // Every copy is an inactive cached block (not freed); a lookup finds the primary, a.
    expect([pool.freeBlocks, pool.inactiveBlocks, pool.lookup(5)]).toEqual([1, 3, a]);
    const d = pool.allocate(); // the never-used block
    expect(d).toBe(3);
    // Evicting b (the LRU head, a duplicate) keeps a as the primary.
    expect(pool.allocate()).toBe(b);
    expect(pool.lookup(5)).toBe(a);
    // Evicting the primary makes the next copy, c, the one a lookup finds.
    expect(pool.allocate()).toBe(a);
    expect([pool.lookup(5), pool.hashOf(c)]).toEqual([c, 5]);
    expect(events).toEqual(["stored 5"]);
    expect(pool.allocate()).toBe(c);
    expect([pool.lookup(5), pool.evictions]).toEqual([-1, 3]);
    expect(events).toEqual(["stored 5", "removed 5"]);
    const refs = new Int32Array(4);
    refs[a] = refs[b] = refs[c] = refs[d] = 1;
    expect(pool.audit(refs)).toBeNull();
  });

  it("refuses to release a block more often than it was acquired", () => {
    const pool = new KvBlockPool(1);
    const a = pool.allocate();
    pool.release(a);
    expect(() => pool.release(a)).toThrow(/released more often/);
  });

  test.prop(
    [
      fc.array(
        fc.oneof(
          fc.record({ op: fc.constant("alloc" as const), hash: fc.option(fc.integer({ min: 0, max: 20 })) }),
          fc.record({ op: fc.constant("release" as const), pick: fc.nat() }),
          fc.record({ op: fc.constant("hit" as const), hash: fc.integer({ min: 0, max: 20 }) }),
        ),
        { maxLength: 200 },
      ),
    ],
    { seed: 42, numRuns: 200 },
  )(
    "conserves blocks: free + inactive + active = capacity, and all free after releasing everything",
    (ops) => {
      const pool = new KvBlockPool(8);
      const held: number[] = [];
      for (const o of ops) {
        if (o.op === "alloc") {
          const b = pool.allocate();
          if (b >= 0) {
            held.push(b);
            if (o.hash !== null) pool.register(b, o.hash);
          }
        } else if (o.op === "hit") {
          const b = pool.lookup(o.hash);
          if (b >= 0) {
            pool.acquire(b);
            held.push(b);
          }
        } else if (held.length > 0) {
          const [b] = held.splice(o.pick % held.length, 1);
          pool.release(b);
        }
        expect(pool.freeBlocks + pool.inactiveBlocks + pool.activeBlocks).toBe(8);
        expect(pool.lruOrder()).toHaveLength(pool.inactiveBlocks);
      }
      for (const b of held) pool.release(b);
      expect(pool.activeBlocks).toBe(0);
      expect(pool.availableBlocks).toBe(8);
    },
  );
});

describe("KV events feed the router's prefix index", () => {
  it("stored on first registration, removed on eviction, nothing on release", async () => {
    const { KvRouter } = await import("../../src/router/kvRouter.js");
    const router = new KvRouter({ blockSize: 4, seed: 1 });
    router.addWorker(0);
    const pool = new KvBlockPool(3);
    const events: string[] = [];
    pool.setListener({
      onBlockStored: (h) => {
        events.push(`stored ${h}`);
        router.onBlockStored(0, h);
      },
      onBlockRemoved: (h) => {
        events.push(`removed ${h}`);
        router.onBlockRemoved(0, h);
      },
    });
    const hashes = Float64Array.from([11, 22]);
    const a = pool.allocate();
    const b = pool.allocate();
    pool.register(a, 11);
    pool.register(b, 22);
    expect(router.overlapBlocks(0, hashes, 0, 2)).toBe(2);
    // A second copy of a registered hash stays private: no event, and it is freed on release.
    const c = pool.allocate();
    expect(pool.register(c, 11)).toBe(false);
    pool.release(c);
    // Leaf first: block b (hash 22) becomes the older LRU entry and is evicted first.
    pool.release(b);
    pool.release(a);
    expect(events).toEqual(["stored 11", "stored 22"]);
    pool.allocate(); // the free block
    pool.allocate(); // evicts b
    expect(events).toEqual(["stored 11", "stored 22", "removed 22"]);
    expect(router.overlapBlocks(0, hashes, 0, 2)).toBe(1);
  });
});
