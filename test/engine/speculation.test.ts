/**
 * Speculative decoding in one engine (docs/speculation.md): the acceptance draws, the bursts a
 * verify pass emits, the token budget and remaining output that cap the drafts, and the KV kept
 * for verified tokens only (rejected draft slots freed).
 */
import { describe, expect, it } from "vitest";
import { BurstSampler, expectedAcceptLength } from "../../src/engine/speculation.js";
import type { WorkerEngine } from "../../src/engine/workerEngine.js";
import { DraftRecorder, speculationSpec as spec } from "../helpers/draftRecorder.js";
import { EngineHarness, engineConfig, sglangHarness } from "../helpers/engineHarness.js";

describe("BurstSampler", () => {
  it("rates 0 and 1 are exact; sampling stops at the first rejection; drafts cap the burst", () => {
    const zero = new BurstSampler(spec([0, 1]));
    const one = new BurstSampler(spec([1, 1, 1]));
    const gap = new BurstSampler(spec([1, 0, 1]));
    for (let req = 0; req < 50; req++) {
      for (let g = 1; g < 50; g++) {
        expect(zero.burst(req, g, 2)).toBe(1);
        expect(one.burst(req, g, 3)).toBe(4);
        expect(one.burst(req, g, 2)).toBe(3);
        expect(gap.burst(req, g, 3)).toBe(2);
      }
    }
  });

  it("is a function of (seed, request, position): equal seeds agree, other seeds differ", () => {
    const rates = [0.8, 0.6, 0.4];
    const draws = (s: BurstSampler) => Array.from({ length: 500 }, (_, i) => s.burst(i % 7, i, 3));
    expect(draws(new BurstSampler(spec(rates, 123)))).toEqual(draws(new BurstSampler(spec(rates, 123))));
    expect(draws(new BurstSampler(spec(rates, 42)))).not.toEqual(draws(new BurstSampler(spec(rates, 43))));
    // Seeds that differ only above bit 31 give other draws too.
    expect(draws(new BurstSampler(spec(rates, 5)))).not.toEqual(
      draws(new BurstSampler(spec(rates, 5 + 2 ** 32))),
    );
  });

  it("the mean burst is 1 + r1 + r1·r2 + r1·r2·r3, each position accepted at its conditional rate", () => {
    const rates = [0.7, 0.5, 0.2];
    expect(expectedAcceptLength(rates)).toBeCloseTo(1 + 0.7 + 0.35 + 0.07, 12);
    const sampler = new BurstSampler(spec(rates));
    const counts = [0, 0, 0, 0, 0];
    let n = 0;
    for (let req = 0; req < 400; req++) {
      for (let g = 1; g <= 500; g++) {
        counts[sampler.burst(req, g, 3)]++;
        n++;
      }
    }
    const mean = (counts[1] + 2 * counts[2] + 3 * counts[3] + 4 * counts[4]) / n;
    expect(Math.abs(mean - expectedAcceptLength(rates))).toBeLessThan(0.01);
    const reached = (k: number) => counts.slice(k).reduce((a, b) => a + b, 0);
    // P(draft i accepted | drafts before it accepted).
    expect(reached(2) / reached(1)).toBeCloseTo(0.7, 2);
    expect(reached(3) / reached(2)).toBeCloseTo(0.5, 2);
    expect(reached(4) / reached(3)).toBeCloseTo(0.2, 2);
  });
});

function tokensOf(h: EngineHarness<WorkerEngine>, req: number): number[] {
  return h.passes.map((p) => p.signals.filter(([r, k]) => r === req && k !== "Complete").length);
}

describe("a speculating engine", () => {
  it.each(["vllm", "sglang"] as const)(
    "%s: with every draft accepted, emits K+1 tokens per decode pass and exactly its output",
    (core) => {
      const timing = new DraftRecorder();
      const speculation = spec([1, 1, 1]);
      const h: EngineHarness<WorkerEngine> =
        core === "vllm"
          ? new EngineHarness(engineConfig({ speculation }), [[]], timing)
          : sglangHarness({ speculation }, [[]], timing);
      h.submit(0, 6, 10);
      h.pass();
      h.pass();
      // The pass statistics the Planner's accept length is built from: one drafting sequence, 3 + 1 tokens.
      const stats = h.engine.stats;
      expect([stats.specDrafts, stats.specDraftTokens, stats.specTokens]).toEqual([1, 3, 4]);
      h.drain();
      // Prefill pass: the first token; then bursts of 4, 4, and the last 1 (9 tokens after the first).
      expect(tokensOf(h, 0)).toEqual([1, 4, 4, 1]);
      expect(h.passes.at(-1)!.signals.at(-1)).toEqual([0, "TokenAndComplete"]);
      // The drafts asked for: 3, 3, then as many as the remaining output can use (1 token left: none).
      expect(timing.drafts).toEqual([
        [0, 0],
        [1, 3],
        [1, 3],
        [0, 0],
      ]);
      expect(h.engine.stats.specDrafts).toBe(0);
      expect(h.engine.pool.activeBlocks).toBe(0);
      expect(h.engine.auditKv([])).toBeNull();
    },
  );

  it("caps the drafts by the remaining output and by the token budget", () => {
    const timing = new DraftRecorder();
    const h = new EngineHarness(
      engineConfig({ speculation: spec([1, 1, 1, 1]), maxBatchedTokens: 3 }),
      [[]],
      timing,
    );
    h.submit(0, 2, 6);
    h.drain();
    // Budget 3 = the real token + 2 drafts; the remaining output then leaves room for 1 draft, then none.
    expect(timing.drafts.slice(1)).toEqual([
      [1, 2],
      [1, 1],
    ]);
    expect(tokensOf(h, 0)).toEqual([1, 3, 2]);
  });

  it("keeps KV for verified tokens only: rejected draft slots are freed at the pass end", () => {
    // No draft ever accepted: each pass allocates slots for 3 drafts and gives them back.
    const bs = 4;
    const h = new EngineHarness(
      engineConfig({ speculation: spec([0, 0, 0]), blockSize: bs, numGpuBlocks: 64 }),
      [[]],
      new DraftRecorder(),
    );
    h.submit(0, 5, 20);
    let computedAfter = 5;
    h.pass();
    while (h.engine.hasWork()) {
      h.pass();
      computedAfter++;
      if (!h.engine.hasWork()) break;
      // After a pass: the emitted tokens minus the last are computed; blocks cover exactly those.
      expect(h.engine.auditKv([])).toBeNull();
      expect(h.engine.pool.activeBlocks).toBe(Math.ceil(computedAfter / bs));
    }
    expect(tokensOf(h, 0).reduce((a, b) => a + b, 0)).toBe(20);
    expect(h.engine.pool.activeBlocks).toBe(0);
  });

  it("accepted drafts' KV is kept and registered: at completion every full block is cached", () => {
    const bs = 4;
    const cfg = engineConfig({ speculation: spec([1, 1, 1]), blockSize: bs, numGpuBlocks: 64 });
    const h = new EngineHarness(cfg, [[11, 12]], new DraftRecorder());
    h.submit(0, 8, 13);
    let passes = 0;
    while (h.engine.hasWork()) {
      h.pass();
      passes++;
      expect(h.engine.auditKv([])).toBeNull();
    }
    // 1 + 4 + 4 + 4 tokens: prefill and three full bursts.
    expect(passes).toBe(4);
    expect(h.engine.pool.activeBlocks).toBe(0);
    // Computed at the end: the prompt and every output token but the last (8 + 12 = 20 tokens),
    // all 5 of their blocks registered and now inactive (cached); none leaked.
    expect(h.engine.pool.inactiveBlocks).toBe(Math.floor((8 + 13 - 1) / bs));
  });

  it("a prefill worker never speculates", () => {
    const timing = new DraftRecorder();
    const h = new EngineHarness(engineConfig({ role: "prefill", speculation: spec([1, 1]) }), [[]], timing);
    h.submit(0, 6, 1);
    h.pass();
    expect(timing.drafts).toEqual([[0, 0]]);
  });

  it("off, the passes are exactly those of an engine without the option", () => {
    const run = (over: object) => {
      const timing = new DraftRecorder();
      const h = new EngineHarness(engineConfig(over), [[1], [1, 2]], timing);
      h.submit(0, 6, 9);
      h.submit(1, 9, 5);
      h.drain();
      return { passes: h.passes, drafts: timing.drafts };
    };
    expect(run({ speculation: null })).toEqual(run({}));
  });
});
