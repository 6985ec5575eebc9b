import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { KvBlockPool } from "../../src/engine/kvBlockPool.js";
import { mixBlockHash } from "../../src/util/blockHashTable.js";

/**
 * Where each hash's probe starts: its own mix, as the pool's default, or one of three homes, so
 * that the entries of different hashes share homes and probes pass over slots whose home matches
 * but whose key (read from the block's record) does not.
 */
const HOMES = [
  { name: "each hash its own home", home: (h: number) => mixBlockHash(h) },
  { name: "hashes sharing three homes", home: (h: number) => h % 3 },
];

/**
 * The pool's hash index (engine/blockIndex.ts) removes an evicted block's entry with a backward
 * shift of its probe run, or points it at the hash's next cached copy. Lookups must answer exactly
 * what a map of each hash's copies does, through many evictions.
 */
describe.each(HOMES)("KvBlockPool's hash index, $name", ({ home }) => {
  test.prop(
    [
      fc.array(
        fc.oneof(
          fc.record({ op: fc.constant("alloc" as const), hash: fc.option(fc.integer({ min: 0, max: 60 })) }),
          fc.record({ op: fc.constant("release" as const), pick: fc.nat() }),
          fc.record({ op: fc.constant("hit" as const), hash: fc.integer({ min: 0, max: 60 }) }),
        ),
        { minLength: 50, maxLength: 600 },
      ),
    ],
    { seed: 7, numRuns: 60 },
  )("answers every lookup as an eagerly deleted map does", (ops) => {
    const capacity = 6;
    const pool = new KvBlockPool(capacity);
    // Reference: hash → its cached copies, the primary first; a copy leaves when its block is
    // evicted, the entry with the last copy.
    const ref = new Map<number, number[]>();
    const refHash = new Array<number>(capacity).fill(-1);
    const primary = (h: number): number => ref.get(h)?.[0] ?? -1;
    const held: number[] = [];
    for (const o of ops) {
      if (o.op === "alloc") {
        const b = pool.allocate();
        if (b < 0) continue;
        if (refHash[b] >= 0) {
          const copies = ref.get(refHash[b])!;
          copies.splice(copies.indexOf(b), 1);
          if (copies.length === 0) ref.delete(refHash[b]);
          refHash[b] = -1;
        }
        held.push(b);
        if (o.hash !== null) {
          const stored = pool.register(b, o.hash, home(o.hash));
          expect(stored).toBe(!ref.has(o.hash));
          ref.set(o.hash, [...(ref.get(o.hash) ?? []), b]);
          refHash[b] = o.hash;
        }
      } else if (o.op === "hit") {
        const b = pool.lookup(o.hash, home(o.hash));
        expect(b).toBe(primary(o.hash));
        if (b >= 0) {
          pool.acquire(b);
          held.push(b);
        }
      } else if (held.length > 0) {
        const [b] = held.splice(o.pick % held.length, 1);
        pool.release(b);
      }
      for (let h = 0; h <= 60; h++) expect(pool.lookup(h, home(h))).toBe(primary(h));
      const refs = new Int32Array(capacity);
      for (const b of held) refs[b]++;
      expect(pool.audit(refs)).toBeNull();
    }
  });

  it("stays exact through many evictions: each block evicted and reused 2,000 times", () => {
    const capacity = 4;
    const pool = new KvBlockPool(capacity);
    for (let h = 0; h < 8000; h++) {
      const b = pool.allocate();
      expect(pool.register(b, 1e12 + h, home(1e12 + h))).toBe(true);
      pool.release(b);
      // Only the last `capacity` hashes are still cached; every older one was evicted.
      for (let back = 0; back < Math.min(h + 1, 2 * capacity); back++) {
        const hit = pool.lookup(1e12 + h - back, home(1e12 + h - back));
        if (back < capacity) expect(hit).toBeGreaterThanOrEqual(0);
        else expect(hit).toBe(-1);
      }
    }
    expect(pool.evictions).toBe(8000 - capacity);
    expect(pool.audit(new Int32Array(capacity))).toBeNull();
  });
});
