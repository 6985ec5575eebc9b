import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import { KvBlockPool } from "../../src/engine/kvBlockPool.js";

/**
 * The KV pool kept block at a time in plain structures — a `Map` from hash to its copies (the
 * primary first, then the duplicates in the order they were cached, as the reference's
 * `HashCopies`), an array for the LRU list, a free stack — as the reference the typed-array pool
 * (grouped index homes, copy chains, records side by side; engine/blockIndex.ts) must match
 * operation by operation: every block handed out, every registration's answer, every lookup,
 * every KV event, the LRU order and the counters. An owner-only run (`releaseOwnerOnlyRun`) is, to
 * the reference, blocks registered under hashes no lookup asks for, released one by one leaf first.
 */
class ReferencePool {
  private readonly hashOf: number[];
  private readonly refs: number[];
  private readonly byHash = new Map<number, number[]>();
  private lru: number[] = [];
  private readonly free: number[] = [];
  private neverUsed = 0;
  evictions = 0;
  readonly events: string[] = [];

  constructor(private readonly capacity: number) {
    this.hashOf = new Array<number>(capacity).fill(-1);
    this.refs = new Array<number>(capacity).fill(0);
  }

  allocate(): number {
    let b: number;
    if (this.free.length > 0) b = this.free.pop()!;
    else if (this.neverUsed < this.capacity) b = this.neverUsed++;
    else if (this.lru.length > 0) {
      b = this.lru.shift()!;
      const h = this.hashOf[b];
      const copies = this.byHash.get(h)!;
      copies.splice(copies.indexOf(b), 1);
      if (copies.length === 0) {
        this.byHash.delete(h);
        this.events.push(`removed ${h}`);
      }
      this.hashOf[b] = -1;
      this.evictions++;
    } else return -1;
    this.refs[b] = 1;
    return b;
  }

  register(b: number, hash: number): boolean {
    if (this.hashOf[b] >= 0) return false;
    this.hashOf[b] = hash;
    const copies = this.byHash.get(hash);
    if (copies !== undefined) {
      copies.push(b);
      return false;
    }
    this.byHash.set(hash, [b]);
    this.events.push(`stored ${hash}`);
    return true;
  }

  lookup(hash: number): number {
    return this.byHash.get(hash)?.[0] ?? -1;
  }

  acquire(b: number): void {
    if (this.refs[b]++ === 0) this.lru.splice(this.lru.indexOf(b), 1);
  }

  release(b: number): void {
    if (--this.refs[b] > 0) return;
    if (this.hashOf[b] >= 0) this.lru.push(b);
    else this.free.push(b);
  }

  get inactiveBlocks(): number {
    return this.lru.length;
  }

  get availableBlocks(): number {
    return this.free.length + this.capacity - this.neverUsed + this.lru.length;
  }

  lruOrder(): number[] {
    return [...this.lru];
  }
}

/** Looks `hash` up in both pools, expecting the same answer, and takes a reference on a hit in both. */
function hitBoth(pool: KvBlockPool, ref: ReferencePool, hash: number, home: number): number {
  const b = pool.lookup(hash, home);
  expect(b).toBe(ref.lookup(hash));
  if (b >= 0) {
    pool.acquire(b);
    ref.acquire(b);
  }
  return b;
}

const opArb = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant("alloc" as const), hash: fc.option(fc.nat(60)) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("release" as const), pick: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant("hit" as const), hash: fc.nat(60) }) },
);

describe("KvBlockPool ≡ the block-at-a-time reference pool", () => {
  test.prop(
    [fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 16 }), fc.array(opArb, { maxLength: 400 })],
    { seed: 4242, numRuns: 300 },
  )("same blocks, answers, lookups, events, LRU order and counters", (capacity, runLength, ops) => {
    const pool = new KvBlockPool(capacity);
    const ref = new ReferencePool(capacity);
    const events: string[] = [];
    pool.setListener({
      onBlockStored: (h) => events.push(`stored ${h}`),
      onBlockRemoved: (h) => events.push(`removed ${h}`),
    });
    // Hashes share groups of homes (as a prompt's runs of 8 blocks do): long probe runs, stale
    // entries and rebuilds on a small table.
    const homeOf = (hash: number): number => Math.floor(hash / runLength) * 1_000_003 + (hash % runLength);
    const held: number[] = [];
    for (const o of ops) {
      if (o.op === "alloc") {
        const b = pool.allocate();
        expect(b).toBe(ref.allocate());
        if (b >= 0) {
          held.push(b);
          if (o.hash !== null) expect(pool.register(b, o.hash, homeOf(o.hash))).toBe(ref.register(b, o.hash));
        }
      } else if (o.op === "hit") {
        const b = hitBoth(pool, ref, o.hash, homeOf(o.hash));
        if (b >= 0) held.push(b);
      } else if (held.length > 0) {
        const [b] = held.splice(o.pick % held.length, 1);
        pool.release(b);
        ref.release(b);
      }
      expect(pool.lruOrder()).toEqual(ref.lruOrder());
      expect(pool.inactiveBlocks).toBe(ref.inactiveBlocks);
      expect(pool.availableBlocks).toBe(ref.availableBlocks);
      expect(pool.evictions).toBe(ref.evictions);
    }
    expect(events).toEqual(ref.events);
    // Every hash the reference holds is found, and none it does not.
    for (let h = 0; h <= 60; h++) expect(pool.lookup(h, homeOf(h))).toBe(ref.lookup(h));
    const refs = new Int32Array(capacity);
    for (const b of held) refs[b]++;
    expect(pool.audit(refs)).toBeNull();
  });

  test.prop(
    [fc.integer({ min: 1200, max: 5000 }), fc.array(fc.nat(), { minLength: 2000, maxLength: 2000 })],
    {
      seed: 4243,
      numRuns: 12,
    },
  )(
    "a large pool: records and index grow as blocks are first handed out, with the same answers",
    (capacity, picks) => {
      const pool = new KvBlockPool(capacity);
      const ref = new ReferencePool(capacity);
      const held: number[] = [];
      const homeOf = (hash: number): number => Math.floor(hash / 8) * 7919 + (hash % 8);
      let next = 0;
      for (const pick of picks) {
        // Mostly new blocks of new prompts (runs of 8 hashes), some hits on earlier ones, releases.
        for (let k = 0; k < 4; k++) {
          const b = pool.allocate();
          expect(b).toBe(ref.allocate());
          if (b < 0) break;
          held.push(b);
          const hash = next++;
          expect(pool.register(b, hash, homeOf(hash))).toBe(ref.register(b, hash));
        }
        const old = pick % Math.max(1, next);
        const hit = pool.lookup(old, homeOf(old));
        expect(hit).toBe(ref.lookup(old));
        if (hit >= 0) {
          pool.acquire(hit);
          ref.acquire(hit);
          held.push(hit);
        }
        while (held.length > capacity / 2) {
          const [b] = held.splice(pick % held.length, 1);
          pool.release(b);
          ref.release(b);
        }
      }
      expect(pool.evictions).toBe(ref.evictions);
      expect(pool.lruOrder()).toEqual(ref.lruOrder());
      for (let h = 0; h < next; h += 3) expect(pool.lookup(h, homeOf(h))).toBe(ref.lookup(h));
      const refs = new Int32Array(capacity);
      for (const b of held) refs[b]++;
      expect(pool.audit(refs)).toBeNull();
    },
  );

  const ownerOnlyOps = fc.array(
    fc.oneof(
      { weight: 3, arbitrary: fc.record({ op: fc.constant("alloc" as const), hash: fc.option(fc.nat(40)) }) },
      {
        weight: 2,
        arbitrary: fc.record({ op: fc.constant("run" as const), blocks: fc.integer({ min: 1, max: 9 }) }),
      },
      { weight: 3, arbitrary: fc.record({ op: fc.constant("release" as const), pick: fc.nat() }) },
      { weight: 3, arbitrary: fc.record({ op: fc.constant("hit" as const), hash: fc.nat(40) }) },
    ),
    { maxLength: 400 },
  );

  test.prop([fc.integer({ min: 1, max: 48 }), ownerOnlyOps], { seed: 4244, numRuns: 300 })(
    "owner-only runs: the blocks, evictions, LRU order and counters of blocks registered under unasked hashes",
    (capacity, ops) => {
      const pool = new KvBlockPool(capacity);
      const ref = new ReferencePool(capacity);
      const homeOf = (hash: number): number => Math.floor(hash / 8) * 7919 + (hash % 8);
      // What a request holds: shared blocks one by one, or an owner-only run it lets go at once.
      const held: { blocks: number[]; run: boolean }[] = [];
      let unasked = 1_000_000;
      for (const o of ops) {
        if (o.op === "alloc" || o.op === "run") {
          const blocks: number[] = [];
          const n = o.op === "alloc" ? 1 : o.blocks;
          // A run's blocks come in one call (`allocateInto`), a single block by `allocate`.
          const ids = new Int32Array(n);
          const got = o.op === "run" ? pool.allocateInto(ids, 0, n) : -1;
          for (let k = 0; k < n; k++) {
            const b = o.op === "run" ? (k < got ? ids[k] : -1) : pool.allocate();
            expect(b).toBe(ref.allocate());
            if (b < 0) break;
            blocks.push(b);
            if (o.op === "run") expect(ref.register(b, unasked++)).toBe(true);
            else if (o.hash !== null)
              expect(pool.register(b, o.hash, homeOf(o.hash))).toBe(ref.register(b, o.hash));
          }
          if (o.op === "run") held.push({ blocks, run: true });
          else for (const b of blocks) held.push({ blocks: [b], run: false });
        } else if (o.op === "hit") {
          const b = hitBoth(pool, ref, o.hash, homeOf(o.hash));
          if (b >= 0) held.push({ blocks: [b], run: false });
        } else if (held.length > 0) {
          const [h] = held.splice(o.pick % held.length, 1);
          if (h.run) pool.releaseOwnerOnlyRun(Int32Array.from(h.blocks), 0, h.blocks.length);
          else pool.release(h.blocks[0]);
          for (let k = h.blocks.length - 1; k >= 0; k--) ref.release(h.blocks[k]);
        }
        expect(pool.lruOrder()).toEqual(ref.lruOrder());
        expect(pool.inactiveBlocks).toBe(ref.inactiveBlocks);
        expect(pool.availableBlocks).toBe(ref.availableBlocks);
        expect(pool.evictions).toBe(ref.evictions);
      }
      for (let h = 0; h <= 40; h++) expect(pool.lookup(h, homeOf(h))).toBe(ref.lookup(h));
      const refs = new Int32Array(capacity);
      for (const h of held) for (const b of h.blocks) refs[b]++;
      expect(pool.audit(refs)).toBeNull();
    },
  );

  test("an owner-only run is refused while KV events are sent (they are per hash)", () => {
    const pool = new KvBlockPool(4);
    pool.setListener({ onBlockStored: () => {}, onBlockRemoved: () => {} });
    const b = pool.allocate();
    expect(() => pool.releaseOwnerOnlyRun(Int32Array.of(b), 0, 1)).toThrow(/listener/);
  });
});
