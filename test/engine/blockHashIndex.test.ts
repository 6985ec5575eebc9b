import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { BlockHashIndex } from "../../src/engine/blockHashIndex.js";

describe("BlockHashIndex", () => {
  it("stores, replaces and deletes 53-bit keys", () => {
    const idx = new BlockHashIndex(4);
    idx.set(2 ** 53 - 1, 7);
    idx.set(0, 3);
    expect(idx.get(2 ** 53 - 1)).toBe(7);
    expect(idx.get(0)).toBe(3);
    idx.set(0, 4);
    expect(idx.get(0)).toBe(4);
    expect(idx.size).toBe(2);
    idx.delete(0);
    expect(idx.get(0)).toBe(-1);
    expect(idx.has(2 ** 53 - 1)).toBe(true);
    idx.delete(12345); // absent: no-op
    expect(idx.size).toBe(1);
  });

  // Keys from a tiny range collide in the table, exercising probe runs and backward-shift deletion.
  test.prop(
    [
      fc.array(
        fc.record({
          del: fc.boolean(),
          key: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 2 ** 53 - 1 })),
        }),
        { maxLength: 300 },
      ),
    ],
    { seed: 7, numRuns: 300 },
  )("behaves like a Map under random inserts and deletes", (ops) => {
    const idx = new BlockHashIndex(64);
    const ref = new Map<number, number>();
    ops.forEach((o, i) => {
      if (o.del) {
        idx.delete(o.key);
        ref.delete(o.key);
      } else if (ref.size < 64 || ref.has(o.key)) {
        idx.set(o.key, i);
        ref.set(o.key, i);
      }
      expect(idx.size).toBe(ref.size);
    });
    for (const o of ops) expect(idx.get(o.key)).toBe(ref.get(o.key) ?? -1);
  });
});
