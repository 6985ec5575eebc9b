/**
 * TRT-LLM's capacity scheduler on the vLLM core (`ai-dynamo/dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/core.rs`, `ai-dynamo/dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/tests.rs`, the TRT-LLM conformance
 * tests; docs/backends.md): GUARANTEED_NO_EVICT admits only what fits to completion and never
 * preempts; MAX_UTILIZATION packs like vLLM.
 */
import { describe, expect, it } from "vitest";
import { EngineHarness, engineConfig } from "../helpers/engineHarness.js";

const noEvict = (over = {}) => engineConfig({ capacityPolicy: "guaranteed_no_evict", ...over });

/** Distinct prompts (no shared blocks): request r's blocks hash to 1000·(r+1) + k. */
function distinctPrompts(n: number, blocks: number): number[][] {
  return Array.from({ length: n }, (_, r) => Array.from({ length: blocks }, (_, k) => 1000 * (r + 1) + k));
}

describe("TRT-LLM GUARANTEED_NO_EVICT", () => {
  it("admits only what fits to completion", () => {
    // bs 4, 10 blocks. r0: 8 prompt + 12 output = 5 blocks to completion; r1 the same: both fit
    // (10). r2 (5 more) waits although its prompt alone (2 blocks) would fit now.
    const h = new EngineHarness(noEvict({ numGpuBlocks: 10 }), distinctPrompts(3, 2));
    h.submit(0, 8, 12);
    h.submit(1, 8, 12);
    h.submit(2, 8, 12);
    h.pass();
    expect(h.admissions.map((a) => a.req)).toEqual([0, 1]);
    expect(h.engine.pool.activeBlocks).toBe(4); // only the prompts are allocated so far
    // r2 is admitted only once r0 and r1 completed and gave their blocks back.
    h.drain();
    expect(h.admissions.map((a) => a.req)).toEqual([0, 1, 2]);
    const r2 = h.admissions[2];
    const lastOfFirst = h.passes.findIndex((p) => p.signals.some(([, k]) => k === "TokenAndComplete"));
    expect(r2.at).toBe(h.passes[lastOfFirst].start + h.passes[lastOfFirst].duration);
    expect(h.engine.preemptions).toBe(0);
  });

  it("vLLM admits optimistically where TRT-LLM waits", () => {
    const vllm = new EngineHarness(engineConfig({ numGpuBlocks: 10 }), distinctPrompts(3, 2));
    const trt = new EngineHarness(noEvict({ numGpuBlocks: 10 }), distinctPrompts(3, 2));
    for (const h of [vllm, trt]) {
      for (let r = 0; r < 3; r++) h.submit(r, 8, 12);
      h.pass();
    }
    expect(vllm.admissions).toHaveLength(3);
    expect(trt.admissions).toHaveLength(2);
  });

  it("never preempts a workload that makes vLLM preempt", () => {
    // 6 requests of 8 + 20 tokens (7 blocks each at bs 4) on 16 blocks: vLLM admits them all
    // on their prompts and must preempt as they grow; no-evict runs two at a time.
    const run = (h: EngineHarness) => {
      for (let r = 0; r < 6; r++) h.submit(r, 8, 20);
      h.drain();
      return h;
    };
    const vllm = run(new EngineHarness(engineConfig({ numGpuBlocks: 16 }), distinctPrompts(6, 2)));
    const trt = run(new EngineHarness(noEvict({ numGpuBlocks: 16 }), distinctPrompts(6, 2)));
    expect(vllm.engine.preemptions).toBeGreaterThan(0);
    expect(trt.engine.preemptions).toBe(0);
    const completed = (h: EngineHarness) =>
      h.passes.flatMap((p) => p.signals).filter(([, k]) => k === "TokenAndComplete").length;
    expect(completed(trt)).toBe(6);
    expect(completed(vllm)).toBe(6);
    expect(trt.engine.pool.activeBlocks).toBe(0);
  });

  it("caps admission as the hardware does: 7319 blocks, bs 32, ISL 1096, max_out 7000 → 28 running", () => {
    // ceil((1096 + 7000) / 32) = 253 blocks per request; floor(7319 / 253) = 28.
    const n = 40;
    const h = new EngineHarness(
      noEvict({ numGpuBlocks: 7319, blockSize: 32, maxBatchedTokens: 1_000_000, maxSequences: 256 }),
      distinctPrompts(n, 34),
    );
    for (let r = 0; r < n; r++) h.submit(r, 1096, 7000);
    h.pass();
    expect(h.engine.runningCount).toBe(28);
    expect(h.engine.waitingCount).toBe(n - 28);
  });

  it("clamps an output beyond the cache at enqueue", () => {
    // 10 blocks of 4 = 40 tokens; a 12-token prompt asking for 100 gets 28.
    const h = new EngineHarness(noEvict({ numGpuBlocks: 10 }), [[1, 2, 3]]);
    h.submit(0, 12, 100);
    h.drain();
    const tokens = h.passes.flatMap((p) => p.signals).filter(([r]) => r === 0).length;
    expect(tokens).toBe(28);
    expect(h.engine.preemptions).toBe(0);
    // vLLM keeps the requested output (and would outgrow the cache).
    const v = new EngineHarness(engineConfig({ numGpuBlocks: 10 }), [[1, 2, 3]]);
    v.submit(0, 12, 100);
    v.drain();
    expect(v.passes.flatMap((p) => p.signals).some(([, k]) => k === "Rejected")).toBe(true);
  });

  it("discounts only active cached blocks from what a request needs", () => {
    // r0 and r1 share their prompt blocks; r1 may reuse 1 (the last prompt block is recomputed).
    const h = new EngineHarness(noEvict({ numGpuBlocks: 9 }), [
      [7, 8],
      [7, 8],
    ]);
    h.submit(0, 8, 12); // 5 to completion, 3 still to allocate
    h.pass();
    h.submit(1, 8, 12);
    h.pass();
    // r0 holds 3 blocks (5 to completion: 2 spoken for); available 9 − 3 − 2 = 4 ≥ 5 − 1 needed.
    expect(h.admissions.map((a) => [a.req, a.reused])).toEqual([
      [0, 0],
      [1, 4],
    ]);
    // Without r0 running, the shared block is inactive: no discount, 5 needed > 4 left.
    const cold = new EngineHarness(noEvict({ numGpuBlocks: 9 }), [
      [7, 8],
      [7, 8],
      [50, 51],
    ]);
    cold.submit(2, 8, 12); // holds 5 to completion: 4 left
    cold.submit(0, 8, 0); // completes in the first pass: its blocks stay cached, inactive
    cold.pass();
    cold.submit(1, 8, 12);
    cold.pass();
    expect(cold.admissions.map((a) => a.req)).toEqual([2, 0]);
  });
});

describe("TRT-LLM MAX_UTILIZATION", () => {
  it("packs like vLLM and preempts the newest request when KV runs out", () => {
    const run = (over = {}) => {
      const h = new EngineHarness(engineConfig({ numGpuBlocks: 16, ...over }), distinctPrompts(6, 2));
      for (let r = 0; r < 6; r++) h.submit(r, 8, 20);
      h.drain();
      return h;
    };
    const vllm = run();
    const maxUtil = run({ capacityPolicy: "max_utilization" });
    expect(maxUtil.passes).toEqual(vllm.passes);
    expect(maxUtil.engine.preemptions).toBe(vllm.engine.preemptions);
    expect(maxUtil.engine.preemptions).toBeGreaterThan(0);
  });
});
