import { describe, expect, it } from "vitest";
import { AdditiveTiming } from "../../src/timing/timingModel.js";
import { mixBlockHash } from "../../src/util/blockHashTable.js";
import { EngineHarness, engineConfig } from "../helpers/engineHarness.js";

/** Fixed 10 ms prefill / 2 ms decode that also records what each pass asked for. */
class RecordingTiming extends AdditiveTiming {
  readonly prefillCalls: [number, number, number][] = [];
  readonly decodeCalls: [number, number, number, number][] = [];
  prefillMs(count: number, meanIsl: number, meanPrefix: number): number {
    this.prefillCalls.push([count, meanIsl, meanPrefix]);
    return 10;
  }
  decodeMs(batch: number, activeKv: number, meanCtx: number, totalKv: number): number {
    this.decodeCalls.push([batch, activeKv, meanCtx, totalKv]);
    return 2;
  }
}

describe("vLLM scheduler: token budget and chunked prefill", () => {
  it("splits a 20-token prompt into 8/8/4 chunks and emits the first token with the last chunk", () => {
    const h = new EngineHarness(engineConfig({ maxBatchedTokens: 8 }), [[1, 2, 3, 4, 5]]);
    h.submit(0, 20, 2);
    expect(h.pass()).toEqual({ start: 0, duration: 10, signals: [] });
    expect(h.pass()).toEqual({ start: 10, duration: 10, signals: [] });
    expect(h.pass()).toEqual({ start: 20, duration: 12, signals: [[0, "Token"]] });
    expect(h.pass()).toEqual({ start: 32, duration: 2, signals: [[0, "TokenAndComplete"]] });
    expect(h.engine.hasWork()).toBe(false);
    // The five full prompt blocks stay cached (inactive); the partial output block was freed.
    expect(h.engine.pool.activeBlocks).toBe(0);
    expect(h.engine.pool.inactiveBlocks).toBe(5);
    expect(h.admissions).toEqual([{ req: 0, at: 0, reused: 0 }]);
  });

  it("schedules running requests first and gives waiting ones the rest of the budget", () => {
    const timing = new RecordingTiming();
    const h = new EngineHarness(
      engineConfig({ maxBatchedTokens: 8 }),
      [
        [1, 2],
        [11, 12, 13],
      ],
      timing,
    );
    h.submit(0, 8, 3);
    expect(h.pass().signals).toEqual([[0, "Token"]]);
    h.submit(1, 12, 1);
    // r0 decodes 1 token, r1 gets the remaining 7 as a first chunk.
    expect(h.pass()).toEqual({ start: 12, duration: 12, signals: [[0, "Token"]] });
    expect(h.pass().signals).toEqual([
      [0, "TokenAndComplete"],
      [1, "TokenAndComplete"],
    ]);
    expect(timing.prefillCalls).toEqual([
      [1, 8, 0],
      [1, 7, 0],
      [1, 12, 7],
    ]);
    // Pass 3: both ready; Σ seq_len = 10 (r0: 8 + 2 generated) + 12 (r1), capacity 32 × 4.
    expect(timing.decodeCalls[2]).toEqual([2, 22, 11, 128]);
  });

  it("caps running requests at max_sequences", () => {
    const h = new EngineHarness(engineConfig({ maxSequences: 1 }), [[1], [2]]);
    h.submit(0, 4, 2);
    h.submit(1, 4, 1);
    h.drain();
    expect(h.admissions.map((a) => [a.req, a.at])).toEqual([
      [0, 0],
      [1, 14],
    ]);
  });
});

describe("vLLM admission policy (`ai-dynamo/dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/core.rs`, policy tests)", () => {
  it("admits when the current sequence fits without reserving future output", () => {
    const h = new EngineHarness(engineConfig({ numGpuBlocks: 3 }), [[1, 2, 3]]);
    h.submit(0, 12, 100);
    h.pass();
    expect(h.admissions).toHaveLength(1);
  });

  it("rejects a fresh sequence larger than the whole KV cache", () => {
    const h = new EngineHarness(engineConfig({ numGpuBlocks: 3 }), [[1, 2, 3]]);
    h.submit(0, 13, 1);
    expect(h.pass().signals).toEqual([[0, "Rejected"]]);
    expect(h.admissions).toHaveLength(0);
  });

  it("rejects prompts at or above max_model_len and caps generation at it", () => {
    const h = new EngineHarness(engineConfig({ maxModelLen: 10 }), [
      [1, 2],
      [1, 2],
    ]);
    h.submit(0, 10, 5);
    h.submit(1, 8, 5);
    h.drain();
    const signals = h.passes.flatMap((p) => p.signals);
    expect(signals).toEqual([
      [0, "Rejected"],
      [1, "Token"],
      [1, "TokenAndComplete"],
    ]);
  });

  it("waits at the head of the queue (strict FIFO) even when a later request would fit", () => {
    const h = new EngineHarness(engineConfig({ numGpuBlocks: 4 }), [[1, 2, 3], [4, 5], [6]]);
    h.submit(0, 12, 1);
    h.submit(1, 8, 1);
    h.submit(2, 4, 1);
    h.pass();
    expect(h.admissions.map((a) => a.req)).toEqual([0]);
  });

  it("discounts prefix hits on active blocks, including blocks computed earlier in the same pass", () => {
    const h = new EngineHarness(engineConfig({ numGpuBlocks: 4 }), [
      [1, 2],
      [1, 2, 3, 4],
    ]);
    h.submit(0, 8, 10);
    h.submit(1, 16, 10);
    h.pass();
    // r1 needs 4 blocks, 2 of them shared with r0 (active): 2 ≤ 2 available.
    expect(h.admissions).toEqual([
      { req: 0, at: 0, reused: 0 },
      { req: 1, at: 0, reused: 8 },
    ]);
    expect(h.engine.pool.activeBlocks).toBe(4);
  });

  it("does not discount hits on inactive blocks, and evicts leaf blocks before their parents", () => {
    const h = new EngineHarness(engineConfig({ numGpuBlocks: 4 }), [
      [1, 2],
      [5, 6, 7],
      [1, 9],
    ]);
    h.submit(0, 8, 1);
    h.pass(); // r0 completes: its blocks for hashes 1 and 2 become inactive.
    expect(h.engine.pool.inactiveBlocks).toBe(2);
    h.submit(1, 12, 10);
    h.pass(); // r1 takes the 2 free blocks and evicts the LRU head: the leaf (hash 2), not hash 1.
    // The engine's index homes of blocks 0..7 of a prompt follow the hash of block 0.
    const home = (k: number): number => (mixBlockHash(h.hashOf(0, 0)) + k) | 0;
    expect(h.engine.pool.lookup(h.hashOf(0, 1), home(1))).toBe(-1);
    expect(h.engine.pool.lookup(h.hashOf(0, 0), home(0))).toBeGreaterThanOrEqual(0);
    h.submit(2, 8, 1);
    h.pass();
    // r2 hits hash 1 (inactive) but still needs 2 blocks with only 1 available: it waits.
    expect(h.admissions.map((a) => a.req)).toEqual([0, 1]);
    expect(h.engine.waitingCount).toBe(1);
  });

  it("recomputes the last block of a fully cached, block-aligned prompt", () => {
    const timing = new RecordingTiming();
    const h = new EngineHarness(
      engineConfig(),
      [
        [1, 2],
        [1, 2],
      ],
      timing,
    );
    h.submit(0, 8, 1);
    h.pass();
    h.submit(1, 8, 1);
    h.pass();
    expect(h.admissions[1]).toEqual({ req: 1, at: 12, reused: 4 });
    expect(timing.prefillCalls[1]).toEqual([1, 8, 4]);
  });

  it("reports var_prefill_length over the prefill requests' whole prompts, as the reference's compute_fpm", () => {
    // Budget 16: r0 (8-token prompt) prefills whole, r1 (20 tokens) its first 8: chunks 8 and 8
    // (variance 0), prompts 8 and 20 (population variance 36).
    const h = new EngineHarness(engineConfig({ maxBatchedTokens: 16 }), [
      [1, 2],
      [3, 4, 5, 6, 7],
    ]);
    h.submit(0, 8, 2);
    h.submit(1, 20, 2);
    h.pass();
    const stats = h.engine.stats;
    expect([stats.numPrefillRequests, stats.sumPrefillTokens, stats.varPrefillLength]).toEqual([2, 16, 36]);
    // Next pass: r1's remaining 12 tokens alone (one request: 0), r0 decodes.
    h.pass();
    expect([h.engine.stats.numPrefillRequests, h.engine.stats.varPrefillLength]).toEqual([1, 0]);
  });

  it("caches the recomputed last block as a second copy of its hash, which outlives the first", () => {
    const h = new EngineHarness(engineConfig({ numGpuBlocks: 4 }), [
      [1, 2],
      [1, 2],
      [5, 6],
    ]);
    h.submit(0, 8, 1);
    h.pass();
    h.submit(1, 8, 1);
    h.pass();
    // r1 reused hash 1 and recomputed hash 2 into a block of its own: both copies of hash 2 stay
    // cached (the reference's pool keeps duplicates), 3 inactive blocks, not 2 and a freed one.
    expect([h.engine.pool.inactiveBlocks, h.engine.pool.freeBlocks]).toEqual([3, 1]);
    // r2 needs 2 blocks: the free one, then the LRU head — r0's copy of hash 2 (released first).
    h.submit(2, 8, 1);
    h.pass();
    const home = (k: number): number => (mixBlockHash(h.hashOf(0, 0)) + k) | 0;
    // Hash 2 is still found: r1's copy took over as the one a lookup finds.
    const copy = h.engine.pool.lookup(h.hashOf(0, 1), home(1));
    expect(copy).toBeGreaterThanOrEqual(0);
    expect(h.engine.pool.hashOf(copy)).toBe(h.hashOf(0, 1));
    expect(h.engine.pool.evictions).toBe(1);
  });

  it("completes a zero-output request after prefill without a token or decode work", () => {
    const timing = new RecordingTiming();
    const h = new EngineHarness(engineConfig(), [[1, 2]], timing);
    h.submit(0, 8, 0);
    expect(h.pass()).toEqual({ start: 0, duration: 10, signals: [[0, "Complete"]] });
    expect(timing.decodeCalls).toHaveLength(0);
    expect(h.engine.pool.activeBlocks).toBe(0);
  });
});

describe("vLLM preemption (LIFO, recompute)", () => {
  it("preempts the newest running request, readmits it later with prefix reuse, and leaks no KV", () => {
    const h = new EngineHarness(engineConfig({ numGpuBlocks: 6 }), [
      [1, 2],
      [3, 4],
    ]);
    h.submit(0, 8, 10);
    h.submit(1, 8, 10);
    h.drain();
    expect(h.engine.preemptions).toBe(1);
    // Pass 6: r0 needs a 4th block with all 6 in use; r1 (newest) is preempted instead.
    const p6 = h.passes[5];
    expect(p6.signals).toEqual([[0, "Token"]]);
    const admissionsOfR1 = h.admissions.filter((a) => a.req === 1);
    expect(admissionsOfR1).toHaveLength(2);
    // r1's leaf blocks were evicted first; its first prompt block (hash 3) survived to be reused.
    expect(admissionsOfR1[1].reused).toBe(4);
    const tokens = new Map<number, number>();
    for (const p of h.passes)
      for (const [r, k] of p.signals) if (k !== "Rejected") tokens.set(r, (tokens.get(r) ?? 0) + 1);
    expect(tokens.get(0)).toBe(10);
    expect(tokens.get(1)).toBe(10);
    expect(h.engine.pool.activeBlocks).toBe(0);
    expect(h.engine.pool.activeBlocks + h.engine.pool.availableBlocks).toBe(6);
  });
});
