import { describe, expect, it } from "vitest";
import { fullBlockCount, hashPrompts } from "../../src/traffic/blockHashes.js";
import { completeTableHashes, type RequestTable, requestIdAt } from "../../src/traffic/requests.js";
import { arrivalTimes, makeSyntheticTable } from "../../src/traffic/synthetic/index.js";
import { selectRows } from "../../src/traffic/tableRows.js";
import { Prng } from "../../src/util/prng.js";
import { summaryOfWorkload } from "../helpers/replay.js";
import { traceSpec, writeTrace } from "../helpers/specs.js";

describe("Prng", () => {
  it("is deterministic with fixed golden values (sfc32 seeded by splitmix32)", () => {
    const r = new Prng(42);
    expect([r.nextUint32(), r.nextUint32(), r.nextUint32(), r.nextUint32(), r.nextUint32()]).toEqual([
      2476999517, 2284424721, 914527439, 3398404915, 1005869237,
    ]);
    const z = new Prng(0);
    expect([z.nextUint32(), z.nextUint32(), z.nextUint32()]).toEqual([591558436, 2737234123, 107644106]);
  });

  it("seeds differing only above bit 31 give different streams; bad seeds are rejected", () => {
    expect(new Prng(1).nextUint32()).not.toBe(new Prng(1 + 2 ** 32).nextUint32());
    expect(new Prng(-1).nextUint32()).not.toBe(new Prng(2 ** 32 - 1).nextUint32());
    expect(() => new Prng(1.5)).toThrow(RangeError);
    expect(() => new Prng(2 ** 60)).toThrow(RangeError);
  });

  it("nextFloat is in [0,1) and roughly uniform; nextIntInclusive stays in range", () => {
    const r = new Prng(7);
    const buckets = new Array<number>(10).fill(0);
    let outOfRange = 0;
    for (let i = 0; i < 100_000; i++) {
      const u = r.nextFloat();
      if (!(u >= 0 && u < 1)) outOfRange++;
      else buckets[Math.floor(u * 10)]++;
    }
    expect(outOfRange).toBe(0);
    for (const b of buckets) expect(Math.abs(b - 10_000)).toBeLessThan(500);
    for (let i = 0; i < 1000; i++) {
      const v = r.nextIntInclusive(3, 5);
      expect(v >= 3 && v <= 5 && Number.isInteger(v)).toBe(true);
    }
  });
});

describe("makeSyntheticTable", () => {
  const base = { inputTokens: 1000, outputTokens: 128, requests: 50, engineBlockSize: 64 } as const;

  it("fixed ISL/OSL, one single-turn session per request, unique prompts", () => {
    const t = makeSyntheticTable({ ...base, arrivals: { type: "concurrency" } });
    expect(t.count).toBe(50);
    expect(t.sessionCount).toBe(50);
    expect(t.engineBlockSize).toBe(64);
    for (let i = 0; i < t.count; i++) {
      expect(t.inputLength[i]).toBe(1000);
      expect(t.outputLength[i]).toBe(128);
      expect(t.session[i]).toBe(i);
      expect(t.turn[i]).toBe(0);
      expect(t.delayAfterPreviousMs[i]).toBe(0);
      expect(t.sessionFirstRow[i]).toBe(i);
      expect(t.nextTurnRow[i]).toBe(-1);
      expect(Number.isNaN(t.timestampMs[i])).toBe(true);
      expect(t.blockOffsets[i + 1] - t.blockOffsets[i]).toBe(fullBlockCount(1000, 64));
    }
    expect(requestIdAt(t.requestIds, 3)).toBe("synthetic-3");
    // Numbered by row, not a string per row.
    expect(t.requestIds).toEqual({ prefix: "synthetic-" });
    expect(t.sessionIds.every((s) => s === null)).toBe(true);
    // No prefix sharing: every block hash (and in particular every first block) is distinct.
    completeTableHashes(t);
    expect(new Set(t.blockHashes).size).toBe(t.blockHashes.length);
    expect(t.blockHashes.length).toBe(50 * 15);
  });

  it("constant_rate is exact: t_i = i·1000/rate", () => {
    const t = makeSyntheticTable({ ...base, arrivals: { type: "constant_rate", requestsPerSecond: 4 } });
    expect(Array.from(t.timestampMs.subarray(0, 4))).toEqual([0, 250, 500, 750]);
    const odd = arrivalTimes(4, { type: "constant_rate", requestsPerSecond: 3 });
    expect(Array.from(odd)).toEqual([0, 1000 / 3, 2000 / 3, 1000]);
  });

  it("poisson is deterministic per seed, starts at 0, with mean gap ≈ 1000/rate", () => {
    const a = arrivalTimes(10_000, { type: "poisson", requestsPerSecond: 5, seed: 42 });
    const b = arrivalTimes(10_000, { type: "poisson", requestsPerSecond: 5, seed: 42 });
    const c = arrivalTimes(10_000, { type: "poisson", requestsPerSecond: 5, seed: 43 });
    expect(Array.from(a)).toEqual(Array.from(b));
    expect(Array.from(a)).not.toEqual(Array.from(c));
    expect(a[0]).toBe(0);
    let prev = 0;
    for (const t of a) {
      expect(t).toBeGreaterThanOrEqual(prev);
      prev = t;
    }
    const meanGap = a[a.length - 1] / (a.length - 1);
    expect(Math.abs(meanGap - 200) / 200).toBeLessThan(0.03);
    // Exponential gaps: std ≈ mean.
    let sq = 0;
    for (let i = 1; i < a.length; i++) sq += (a[i] - a[i - 1] - meanGap) ** 2;
    const std = Math.sqrt(sq / (a.length - 2));
    expect(Math.abs(std - meanGap) / meanGap).toBeLessThan(0.06);
    const table = makeSyntheticTable({
      ...base,
      requests: 10_000,
      arrivals: { type: "poisson", requestsPerSecond: 5, seed: 42 },
    });
    expect(Array.from(table.timestampMs)).toEqual(Array.from(a));
  });

  it("handles ISL below one block and rejects bad options", () => {
    const t = makeSyntheticTable({ ...base, inputTokens: 10, arrivals: { type: "concurrency" } });
    expect(t.blockHashes.length).toBe(0);
    expect(Array.from(t.blockOffsets.subarray(0, 3))).toEqual([0, 0, 0]);
    expect(makeSyntheticTable({ ...base, requests: 0, arrivals: { type: "concurrency" } }).count).toBe(0);
    expect(() => makeSyntheticTable({ ...base, inputTokens: 0, arrivals: { type: "concurrency" } })).toThrow(
      RangeError,
    );
    expect(() =>
      makeSyntheticTable({ ...base, arrivals: { type: "poisson", requestsPerSecond: 0, seed: 1 } }),
    ).toThrow(RangeError);
    expect(() =>
      makeSyntheticTable({ ...base, arrivals: { type: "constant_rate", requestsPerSecond: Number.NaN } }),
    ).toThrow(RangeError);
  });
});

/** 40 requests of 30 prompt tokens on blocks of 4 (8 prompt blocks each), or `requests` of them. */
function smallTable(requests = 40) {
  return makeSyntheticTable({
    inputTokens: 30,
    outputTokens: 9,
    requests,
    engineBlockSize: 4,
    arrivals: { type: "constant_rate", requestsPerSecond: 400 },
  });
}

/** Two workers of `numGpuBlocks` blocks of 4 tokens; the trace file is never read (a table is given). */
function smallSpec(numGpuBlocks: number) {
  return traceSpec(writeTrace([{ timestamp: 0, input_length: 1, output_length: 1, hash_ids: [1] }]), {
    role: { replicas: 2, blockSize: 4, numGpuBlocks, maxSequences: 8 },
  });
}

/** Every hash of `table` in a copy of its array (the table's own stays as it is). */
function counterHashes(table: RequestTable): Float64Array {
  const counter = Float64Array.from(table.blockHashes);
  completeTableHashes({ ...table, blockHashes: counter });
  return counter;
}

describe("synthetic prompt hashes", () => {
  it("are a counter (unique by construction) and give the run chained hashes of the same ids give", async () => {
    const E = 4;
    const table = smallTable();
    // Written on demand: nothing before a use asks.
    expect(table.blockHashes.every((h) => h === 0)).toBe(true);
    const counter = counterHashes(table);
    expect(Array.from(counter.subarray(0, 8))).toEqual([1, 2, 3, 4, 5, 6, 7, 1 + 7]);
    expect(Array.from(counter)).toEqual(Array.from(counter, (_, k) => k + 1));
    // The hashes the synthetic source used to carry: chained over counter ids, one per engine block.
    const perRequest = Math.ceil(30 / E);
    const ids = new Uint32Array(40 * perRequest).map((_, k) => k + 1);
    const idOffsets = new Int32Array(41).map((_, i) => i * perRequest);
    const chained = hashPrompts(40, ids, idOffsets, table.inputLength, E, E);
    expect(Array.from(chained.offsets)).toEqual(Array.from(table.blockOffsets));
    // A cache small enough to preempt, so requests re-hit their own cached blocks on readmission.
    const spec = smallSpec(40);
    // The lazy table as the replay gets it: preempted requests have their hashes written then.
    const lazy = await summaryOfWorkload(spec, table);
    expect(lazy.preemptions).toBeGreaterThan(0);
    const hashedRows = Array.from({ length: table.count }, (_, r) => table.lazyHashes!.hashedCount(r) > 0);
    expect(hashedRows.some((h) => h)).toBe(true);
    expect(lazy).toEqual(
      await summaryOfWorkload(spec, { ...table, blockHashes: chained.hashes, lazyHashes: null }),
    );
    expect(lazy).toEqual(await summaryOfWorkload(spec, { ...table, blockHashes: counter, lazyHashes: null }));
  });

  it("a selection of rows (a retune window) copies them hashed in full", () => {
    const table = smallTable(10);
    const sub = selectRows(table, [2, 5, 9], true);
    expect(sub.lazyHashes ?? null).toBe(null);
    for (const [i, r] of [2, 5, 9].entries()) {
      const first = table.blockOffsets[r];
      const n = table.blockOffsets[r + 1] - first;
      expect(Array.from(sub.blockHashes.subarray(sub.blockOffsets[i], sub.blockOffsets[i + 1]))).toEqual(
        Array.from({ length: n }, (_, k) => first + k + 1),
      );
    }
  });

  it("a replay that needs none writes none: every block is owner-only without preemptions", async () => {
    const table = smallTable();
    const spec = smallSpec(4000);
    const lazy = await summaryOfWorkload(spec, table);
    expect(lazy.preemptions).toBe(0);
    for (let r = 0; r < table.count; r++) expect(table.lazyHashes!.hashedCount(r)).toBe(0);
    expect(table.blockHashes.every((h) => h === 0)).toBe(true);
    const counter = counterHashes(table);
    expect(lazy).toEqual(await summaryOfWorkload(spec, { ...table, blockHashes: counter, lazyHashes: null }));
  });
});
