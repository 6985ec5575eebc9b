/**
 * `engine.enable_chunked_prefill` (`ai-dynamo/dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/core.rs`): with it off, a prompt is prefilled whole in
 * one pass or waits for a pass with room; one longer than the pass budget can never run.
 */
import { describe, expect, it } from "vitest";
import { EngineHarness, engineConfig } from "../helpers/engineHarness.js";

// 4-token blocks; a 16-token pass budget.
const prompts = [
  [1, 2, 3],
  [4, 5, 6],
  [7, 8, 9, 10, 11],
];

describe("chunked prefill off", () => {
  it("chunked (the default): a 12-token prompt behind another shares the pass budget, chunked", () => {
    const h = new EngineHarness(engineConfig({ maxBatchedTokens: 16 }), prompts);
    h.submit(0, 12, 4);
    h.submit(1, 12, 4);
    h.pass();
    // 12 + 4 of the second prompt in the first pass.
    expect(h.admissions.map((a) => a.req)).toEqual([0, 1]);
  });

  it("off: the second prompt waits for a pass whose budget holds all of it", () => {
    const h = new EngineHarness(engineConfig({ maxBatchedTokens: 16, chunkedPrefill: false }), prompts);
    h.submit(0, 12, 4);
    h.submit(1, 12, 4);
    h.pass();
    expect(h.admissions.map((a) => a.req)).toEqual([0]);
    // Next pass: request 0 decodes one token, 15 left: the 12-token prompt fits whole.
    h.pass();
    expect(h.admissions.map((a) => a.req)).toEqual([0, 1]);
    h.drain();
    expect(h.engine.auditKv([])).toBeNull();
  });

  it("off: a prompt longer than the pass budget is rejected instead of waiting forever", () => {
    const h = new EngineHarness(engineConfig({ maxBatchedTokens: 16, chunkedPrefill: false }), prompts);
    h.submit(2, 20, 4);
    const first = h.pass();
    expect(first.signals).toEqual([[2, "Rejected"]]);
    expect(h.engine.isIdle()).toBe(true);
  });
});
