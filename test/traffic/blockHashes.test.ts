import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  computeBlockHashes,
  computeBlockHashPrefix,
  fullBlockCount,
  promptBlockHashes,
  toU32,
} from "../../src/traffic/blockHashes.js";
import { chainHash, localHashOfRun, SEQUENCE_HASH_SEED } from "../../src/util/blockHash.js";

const TWO_POW_53 = 2 ** 53;

function expectValidHashes(values: Float64Array): void {
  for (const v of values) {
    expect(Number.isInteger(v)).toBe(true);
    expect(v).toBeGreaterThanOrEqual(0);
    expect(v).toBeLessThan(TWO_POW_53);
  }
}

/** Number of leading equal entries. */
function commonPrefix(a: Float64Array, b: Float64Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

describe("fullBlockCount", () => {
  it("counts only full engine blocks", () => {
    expect(fullBlockCount(0, 64)).toBe(0);
    expect(fullBlockCount(63, 64)).toBe(0);
    expect(fullBlockCount(64, 64)).toBe(1);
    expect(fullBlockCount(712, 64)).toBe(11);
  });
});

describe("hash_ids expansion (mocker loadgen reference cases)", () => {
  it("hash_ids [1,2], trace block 4, length 6 behaves like tokens [1,1,1,1,2,2]", () => {
    // Engine block 2: blocks [1,1] [1,1] [2,2].
    const h = promptBlockHashes([1, 2], 4, 2, 6);
    expect(h.sequence.length).toBe(3);
    expect(h.local[0]).toBe(h.local[1]);
    expect(h.local[2]).not.toBe(h.local[0]);
    expect(h.local[0]).toBe(localHashOfRun(1, 2));
    expect(h.local[2]).toBe(localHashOfRun(2, 2));
    expect(new Set(h.sequence).size).toBe(3);
    expectValidHashes(h.sequence);
    expectValidHashes(h.local);

    // Engine block 4: one full block [1,1,1,1], the partial [2,2] gets no hash.
    const h4 = promptBlockHashes([1, 2], 4, 4, 6);
    expect(h4.sequence.length).toBe(1);
    expect(h4.local[0]).toBe(localHashOfRun(1, 4));
  });

  it("identical token content gives identical hashes whatever hash_ids produced it", () => {
    // [1,1,1,1,2,2] as ids [1,2] at trace block 4, or ids [1,1,2] at trace block 2.
    for (const engine of [1, 2, 3, 6]) {
      const a = promptBlockHashes([1, 2], 4, engine, 6);
      const b = promptBlockHashes([1, 1, 2], 2, engine, 6);
      expect(Array.from(b.sequence)).toEqual(Array.from(a.sequence));
      expect(Array.from(b.local)).toEqual(Array.from(a.local));
    }
    // Engine block 3 spans both ids: [1,1,1] then [1,2,2] (two runs).
    const spanning = promptBlockHashes([1, 2], 4, 3, 6);
    expect(spanning.local[0]).toBe(localHashOfRun(1, 3));
    expect(spanning.local[1]).not.toBe(localHashOfRun(1, 3));
    expect(spanning.local[1]).not.toBe(localHashOfRun(2, 3));
  });

  it("missing input_length defaults to capacity (2 ids × 4 = 8)", () => {
    expect(promptBlockHashes([1, 2], 4, 4).sequence.length).toBe(2);
    expect(promptBlockHashes([1, 2], 4, 1).sequence.length).toBe(8);
    // Longer input_length is clamped to capacity.
    expect(promptBlockHashes([1, 2], 4, 1, 100).sequence.length).toBe(8);
  });

  it("sequence hashes chain through chainHash from SEQUENCE_HASH_SEED", () => {
    const h = promptBlockHashes([5, 9, 5, 5, 7], 8, 3, 37);
    let parent = SEQUENCE_HASH_SEED;
    for (let i = 0; i < h.sequence.length; i++) {
      parent = chainHash(parent, h.local[i]);
      expect(h.sequence[i]).toBe(parent);
    }
  });

  it("hash ids are truncated to u32", () => {
    expect(toU32(2 ** 32 + 5)).toBe(5);
    expect(toU32(2 ** 32 - 1)).toBe(2 ** 32 - 1);
    const a = promptBlockHashes([2 ** 32 + 5, 6], 4, 2);
    const b = promptBlockHashes([5, 6], 4, 2);
    expect(Array.from(a.sequence)).toEqual(Array.from(b.sequence));
  });
});

describe("block-size expansion (trace 512 / engine 64)", () => {
  it("each hash id becomes 8 engine blocks with equal local but distinct chained hashes", () => {
    const h = promptBlockHashes([11, 12], 512, 64);
    expect(h.sequence.length).toBe(16);
    for (let i = 1; i < 8; i++) expect(h.local[i]).toBe(h.local[0]);
    for (let i = 9; i < 16; i++) expect(h.local[i]).toBe(h.local[8]);
    expect(h.local[8]).not.toBe(h.local[0]);
    expect(new Set(h.sequence).size).toBe(16);
  });

  it("a partial last trace block yields floor(rem/64) full engine blocks", () => {
    const h = promptBlockHashes([11, 12], 512, 64, 512 + 200);
    expect(h.sequence.length).toBe(8 + 3);
    // The shared part matches the full-length prompt.
    const full = promptBlockHashes([11, 12], 512, 64);
    expect(Array.from(h.sequence)).toEqual(Array.from(full.sequence.subarray(0, 11)));
  });

  it("two prompts sharing the first k full hash ids share exactly 8k engine blocks", () => {
    const a = promptBlockHashes([1, 2, 3, 4, 5], 512, 64);
    const b = promptBlockHashes([1, 2, 3, 40, 5], 512, 64);
    expect(commonPrefix(a.sequence, b.sequence)).toBe(24);
    // The 5th id is equal again, yet the chained hashes stay different after the divergence.
    expect(a.local[32]).toBe(b.local[32]);
    expect(a.sequence[32]).not.toBe(b.sequence[32]);
  });

  it("engine block 1024 > trace block 512: an engine block spans two ids, sharing needs both", () => {
    const a = promptBlockHashes([1, 2, 3, 4], 512, 1024);
    expect(a.sequence.length).toBe(2);
    expect(commonPrefix(a.sequence, promptBlockHashes([1, 2, 3, 5], 512, 1024).sequence)).toBe(1);
    expect(commonPrefix(a.sequence, promptBlockHashes([1, 9, 3, 4], 512, 1024).sequence)).toBe(0);
    // 3 ids at 1024: the third id only fills a partial block, so it carries no hash.
    expect(promptBlockHashes([1, 2, 3], 512, 1024).sequence.length).toBe(1);
    // Repeated ids merge into one run: [7,7] at 512 is the same content as one 1024-token run.
    expect(promptBlockHashes([7, 7], 512, 1024).local[0]).toBe(localHashOfRun(7, 1024));
  });

  it("computeBlockHashes writes at an offset inside packed ids and rejects over-long prompts", () => {
    const ids = new Uint32Array([99, 1, 2, 99]);
    const out = new Float64Array(5).fill(-1);
    expect(computeBlockHashes(ids, 1, 2, 4, 6, 2, out, 1)).toBe(3);
    expect(out[0]).toBe(-1);
    expect(out[4]).toBe(-1);
    expect(Array.from(out.subarray(1, 4))).toEqual(Array.from(promptBlockHashes([1, 2], 4, 2, 6).sequence));
    expect(() => computeBlockHashes(ids, 1, 2, 4, 9, 2, out, 0)).toThrow(RangeError);
  });

  it("computeBlockHashPrefix writes the first `limit` hashes computeBlockHashes writes, and nothing past them", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 12 }),
        fc.constantFrom(1, 2, 3, 4, 8),
        fc.constantFrom(1, 2, 3, 4, 5, 8),
        fc.integer({ min: 0, max: 40 }),
        (hashIds, trace, engine, limit) => {
          const ids = Uint32Array.from(hashIds);
          const len = ids.length * trace;
          const full = promptBlockHashes(hashIds, trace, engine, len).sequence;
          const out = new Float64Array(full.length + 1).fill(-1);
          const n = computeBlockHashPrefix(ids, 0, ids.length, trace, len, engine, out, 1, limit);
          expect(n).toBe(Math.min(limit, full.length));
          expect(Array.from(out.subarray(1, 1 + n))).toEqual(Array.from(full.subarray(0, n)));
          expect(out[0]).toBe(-1);
          for (let k = 1 + n; k < out.length; k++) expect(out[k]).toBe(-1);
        },
      ),
      { seed: 20261207, numRuns: 300 },
    );
  });
});

describe("prefix-sharing property", () => {
  it("lists sharing a prefix of k ids share exactly floor(k·T/E) leading engine hashes and differ next", () => {
    const u32 = fc.integer({ min: 0, max: 2 ** 32 - 1 });
    fc.assert(
      fc.property(
        fc.array(u32, { minLength: 0, maxLength: 12 }),
        fc.array(u32, { minLength: 1, maxLength: 6 }),
        fc.array(u32, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 96 }),
        fc.integer({ min: 1, max: 96 }),
        (prefix, tailA, tailB, traceBlock, engineBlock) => {
          fc.pre(tailA[0] !== tailB[0]);
          const a = promptBlockHashes([...prefix, ...tailA], traceBlock, engineBlock);
          const b = promptBlockHashes([...prefix, ...tailB], traceBlock, engineBlock);
          // Content is equal on the first k·T tokens and differs at token k·T.
          const shared = Math.floor((prefix.length * traceBlock) / engineBlock);
          expect(commonPrefix(a.sequence, b.sequence)).toBe(
            Math.min(shared, a.sequence.length, b.sequence.length),
          );
          if (shared < a.sequence.length && shared < b.sequence.length) {
            expect(a.sequence[shared]).not.toBe(b.sequence[shared]);
          }
        },
      ),
      { numRuns: 500, seed: 12345 },
    );
  });

  it("when the trace block is a multiple of the engine block, k shared ids ⇒ k·(T/E) shared hashes", () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(1000), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 20 }),
        fc.constantFrom(1, 2, 4, 8, 16),
        (ids, cut, ratio) => {
          const k = Math.min(cut, ids.length);
          const other = ids.map((v, i) => (i < k ? v : v + 5000));
          const engine = 16;
          const a = promptBlockHashes(ids, engine * ratio, engine);
          const b = promptBlockHashes(other, engine * ratio, engine);
          expect(commonPrefix(a.sequence, b.sequence)).toBe(k * ratio);
        },
      ),
      { numRuns: 300, seed: 777 },
    );
  });
});
