import { describe, expect, it } from "vitest";
import { BlockBoundaries } from "../../src/engine/blockBoundaries.js";
import { Sequence } from "../../src/engine/sequence.js";

/** A decode-ready request with `computed` tokens in ceil(computed / bs) blocks. */
function request(computed: number, bs: number, blocks = Math.ceil(computed / bs)): Sequence {
  const s = new Sequence(0, computed, 100, new Float64Array(0), 0, 0);
  s.numComputed = computed;
  for (let b = 0; b < blocks; b++) s.blocks.push(b);
  return s;
}

describe("BlockBoundaries", () => {
  it("buckets each request by the pass residue of its next block allocation and fill, in batch order", () => {
    const bs = 4;
    // Computed 8 (next token starts block 2: allocates at pass 0, fills at pass 3), 9 (allocates
    // at pass 3, fills at 2), 10 (allocates at 2, fills at 1), 12 (allocates at 0, fills at 3).
    const batch = [request(8, bs), request(9, bs), request(10, bs), request(12, bs)];
    const b = new BlockBoundaries();
    expect(b.plan(batch, batch.length, bs, true)).toBe(true);
    const at = (start: Int32Array, rows: Int32Array, r: number) =>
      Array.from(rows.subarray(start[r], start[r + 1]));
    expect([0, 1, 2, 3].map((r) => at(b.allocStart, b.allocRows, r))).toEqual([[0, 3], [], [2], [1]]);
    expect([0, 1, 2, 3].map((r) => at(b.fillStart, b.fillRows, r))).toEqual([[], [2], [1], [0, 3]]);
    // Without prefix caching there are no fills to register.
    expect(b.plan(batch, batch.length, bs, false)).toBe(true);
    expect([0, 1, 2, 3].map((r) => at(b.fillStart, b.fillRows, r))).toEqual([[], [], [], []]);
  });

  it("refuses a batch whose blocks do not match its computed tokens", () => {
    const b = new BlockBoundaries();
    expect(b.plan([request(8, 4, 3)], 1, 4, true)).toBe(false);
    expect(b.plan([request(8, 4, 1)], 1, 4, true)).toBe(false);
  });

  it("grows its buckets for larger batches and block sizes", () => {
    const bs = 64;
    const batch = Array.from({ length: 100 }, (_, i) => request(1000 + i, bs));
    const b = new BlockBoundaries();
    expect(b.plan(batch, batch.length, bs, true)).toBe(true);
    let total = 0;
    for (let r = 0; r < bs; r++) total += b.allocStart[r + 1] - b.allocStart[r];
    expect(total).toBe(100);
    // Request i allocates at pass (64·ceil((1000+i)/64) − (1000+i)).
    for (let i = 0; i < 100; i++) {
      const r = 64 * Math.ceil((1000 + i) / 64) - (1000 + i);
      expect(Array.from(b.allocRows.subarray(b.allocStart[r], b.allocStart[r + 1]))).toContain(i);
    }
  });
});
