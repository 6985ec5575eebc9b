import { describe, expect, it } from "vitest";
import { pickLowestCost, softmaxProbabilities } from "../../src/router/costChoice.js";
import { KvRouter, type KvRouterInit } from "../../src/router/kvRouter.js";
import { Prng } from "../../src/util/prng.js";

const BS = 16;
const q = Float64Array.of(1, 2); // 2 full blocks, 32 tokens

/**
 * Decode-load-only router (no prefill term, no dedupe) whose worker w carries `liveBlocks[w]` live
 * blocks, so worker w costs liveBlocks[w] + 2 for q.
 */
function routerWithLoads(liveBlocks: number[], extra: Partial<KvRouterInit> = {}): KvRouter {
  const router = new KvRouter({ blockSize: BS, trackPrefillTokens: false, assumeKvReuse: false, ...extra });
  let req = 0;
  liveBlocks.forEach((n, w) => {
    router.addWorker(w);
    for (let b = 0; b < n; b++) {
      const h = Float64Array.of(1000 * (w + 1) + b);
      router.addRequest(w, req++, h, 0, 1, BS, 0, Number.NaN);
    }
  });
  return router;
}

function tally(router: KvRouter, workers: number, draws: number): number[] {
  const counts = new Array<number>(workers).fill(0);
  for (let i = 0; i < draws; i++) counts[router.select(q, 0, 2, 32, 0)]++;
  return counts;
}

describe("ties at temperature 0", () => {
  it("are broken deterministically for a fixed seed", () => {
    const seq = (seed: number): number[] => {
      const router = routerWithLoads([0, 0, 0, 0], { seed });
      return Array.from({ length: 40 }, () => router.select(q, 0, 2, 32, 0));
    };
    expect(seq(7)).toEqual(seq(7));
    expect(seq(0xd1a05eed)).toEqual(seq(0xd1a05eed));
    expect(seq(7)).not.toEqual(seq(8));
  });

  it("spread evenly over the tied minima and never pick a costlier worker", () => {
    // Workers 0, 2, 3 cost 2; worker 1 costs 3.
    const n = 30_000;
    const counts = tally(routerWithLoads([0, 1, 0, 0]), 4, n);
    expect(counts[1]).toBe(0);
    const p = 1 / 3;
    const sd = Math.sqrt(n * p * (1 - p));
    for (const w of [0, 2, 3]) expect(Math.abs(counts[w] - n * p)).toBeLessThan(4 * sd);
  });

  it("draw nothing when the minimum is unique", () => {
    const prng = new Prng(1);
    const twin = new Prng(1);
    expect(pickLowestCost(Float64Array.of(3, 1, 2), 3, prng)).toBe(1);
    expect(prng.nextUint32()).toBe(twin.nextUint32());
  });
});

describe("softmax sampling at temperature > 0", () => {
  it("normalizes costs to [0, 1] before the temperature (hand-computed)", () => {
    const out = new Float64Array(3);
    // costs 2, 3, 5: range 3, T = 0.5 → weights exp(0), exp(−1/1.5), exp(−3/1.5)
    softmaxProbabilities(Float64Array.of(2, 3, 5), 3, 0.5, out);
    const w = [1, Math.exp(-2 / 3), Math.exp(-2)];
    const sum = w[0] + w[1] + w[2];
    for (let i = 0; i < 3; i++) expect(out[i]).toBeCloseTo(w[i] / sum, 12);
    // Scaling all costs does not change the probabilities (only the normalized spread matters).
    const scaled = new Float64Array(3);
    softmaxProbabilities(Float64Array.of(20, 30, 50), 3, 0.5, scaled);
    for (let i = 0; i < 3; i++) expect(scaled[i]).toBeCloseTo(out[i], 12);
    // All equal: uniform.
    softmaxProbabilities(Float64Array.of(4, 4, 4), 3, 0.5, out);
    expect(Array.from(out)).toEqual([1 / 3, 1 / 3, 1 / 3]);
  });

  it("empirical pick frequencies match the softmax probabilities (chi-square, fixed seed)", () => {
    // Costs 2, 3, 5 (0, 1 and 3 live blocks + 2 new blocks).
    const n = 20_000;
    const router = routerWithLoads([0, 1, 3], { temperature: 0.5 });
    const counts = tally(router, 3, n);
    expect([router.lastCost(0), router.lastCost(1), router.lastCost(2)]).toEqual([2, 3, 5]);
    const expected = new Float64Array(3);
    softmaxProbabilities(Float64Array.of(2, 3, 5), 3, 0.5, expected);
    let chi2 = 0;
    for (let i = 0; i < 3; i++) {
      const e = n * expected[i];
      chi2 += (counts[i] - e) ** 2 / e;
      expect(Math.abs(counts[i] - e)).toBeLessThan(4 * Math.sqrt(e * (1 - expected[i])));
    }
    // 2 degrees of freedom: P(χ² > 13.8) = 0.001.
    expect(chi2).toBeLessThan(13.8);
  });

  it("is uniform when all costs are equal", () => {
    const n = 12_000;
    const counts = tally(routerWithLoads([2, 2, 2], { temperature: 1 }), 3, n);
    const sd = Math.sqrt((n * 2) / 9);
    for (const c of counts) expect(Math.abs(c - n / 3)).toBeLessThan(4 * sd);
  });

  it("is reproducible for a fixed seed", () => {
    const seq = (): number[] => {
      const router = routerWithLoads([0, 1, 3], { temperature: 0.7, seed: 42 });
      return Array.from({ length: 50 }, () => router.select(q, 0, 2, 32, 0));
    };
    expect(seq()).toEqual(seq());
  });
});
