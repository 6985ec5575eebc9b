/**
 * vLLM `--async-scheduling` (scheduler.async_scheduling): pass N+1 is scheduled while pass N
 * runs, so a request that arrives during pass N is first admitted in pass N+2 when the worker
 * runs passes back to back. An idle worker, or one with nothing running, schedules at once.
 * On the SGLang core the same setting is SGLang's overlap scheduler (docs/backends.md).
 */
import { describe, expect, it } from "vitest";
import type { EngineConfig } from "../../src/engine/workerEngine.js";
import { speculationSpec } from "../helpers/draftRecorder.js";
import { EngineHarness, engineConfig, sglangHarness } from "../helpers/engineHarness.js";

function admittedAtPass(
  asyncScheduling: boolean,
  backend: "vllm" | "sglang" = "vllm",
  over: Partial<EngineConfig> = {},
): number[] {
  const h =
    backend === "vllm"
      ? new EngineHarness(engineConfig({ asyncScheduling, ...over }), [[1], [2], [3]])
      : sglangHarness({ asyncScheduling, blockSize: 4, ...over }, [[1], [2], [3]]);
  h.submit(0, 4, 50); // keeps the worker busy with back-to-back decode passes
  h.pass(); // pass 1: prefill of request 0
  h.submit(1, 4, 2); // arrives while pass 1 runs
  h.pass(); // pass 2
  h.pass(); // pass 3
  h.submit(2, 4, 2);
  h.pass(); // pass 4
  h.pass(); // pass 5
  // Pass index (1-based) at which each request was admitted.
  return h.admissions.map((a) => h.passes.findIndex((p) => p.start === a.at) + 1);
}

describe("engine: async scheduling", () => {
  it("off (default): a request queued during a pass joins the next pass", () => {
    expect(admittedAtPass(false)).toEqual([1, 2, 4]);
  });

  it("on: it joins the pass after the next one while passes run back to back", () => {
    expect(admittedAtPass(true)).toEqual([1, 3, 5]);
  });

  it("on: an idle worker admits at once", () => {
    const h = new EngineHarness(engineConfig({ asyncScheduling: true }), [[1], [2]]);
    h.submit(0, 4, 1);
    h.drain();
    h.now += 100; // idle gap
    h.submit(1, 4, 1);
    h.pass();
    expect(h.admissions.map((a) => a.req)).toEqual([0, 1]);
    expect(h.admissions[1].at).toBe(h.now - h.passes[h.passes.length - 1].duration);
  });

  it("on: a worker whose batch emptied admits at once (nothing was scheduled ahead)", () => {
    const h = new EngineHarness(engineConfig({ asyncScheduling: true }), [[1], [2]]);
    h.submit(0, 4, 1);
    h.pass(); // prefill + the only token: request 0 completes
    h.submit(1, 4, 1);
    h.pass();
    expect(h.admissions.map((a) => a.req)).toEqual([0, 1]);
  });

  it("SGLang's overlap scheduler: the same one-pass admission delay while passes run back to back", () => {
    // Off it is the reference mocker's SGLang: a request queued during a pass joins the next one
    // (request 0 decodes in every pass but the ones that prefill another request).
    expect(admittedAtPass(false, "sglang")).toEqual([1, 2, 4]);
    expect(admittedAtPass(true, "sglang")).toEqual([1, 3, 5]);
  });

  it("SGLang's overlap scheduler with speculative decoding (spec v2): the same delay, bursts or not", () => {
    // Request 0 verifies 2 drafts a pass, all accepted: its bursts end it sooner, not the schedule.
    const spec = { speculation: speculationSpec([1, 1]) };
    expect(admittedAtPass(false, "sglang", spec)).toEqual([1, 2, 4]);
    expect(admittedAtPass(true, "sglang", spec)).toEqual([1, 3, 5]);
  });
});
