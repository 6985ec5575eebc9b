/**
 * The `--set` arguments that give fleetsim the reference's synchronous scheduler in the
 * conformance harness and the reference goldens (scripts/conformance/referenceScheduler.ts).
 */
import { describe, expect, it } from "vitest";
import { referenceSchedulerSets } from "../../scripts/conformance/referenceScheduler.js";

describe("referenceSchedulerSets", () => {
  it("sets every vLLM role synchronous; other backends and unreadable configs get nothing", () => {
    expect(referenceSchedulerSets("engine: {model: m, hardware: h200_sxm}\n")).toEqual([
      "--set",
      "engine.workers.aggregated.scheduler.async_scheduling=false",
    ]);
    expect(referenceSchedulerSets("engine: {mode: disaggregated, backend: vllm}\n")).toEqual([
      "--set",
      "engine.workers.prefill.scheduler.async_scheduling=false",
      "--set",
      "engine.workers.decode.scheduler.async_scheduling=false",
    ]);
    expect(referenceSchedulerSets("engine: {backend: sglang}\n")).toEqual([]);
    // The harness's bad-YAML case: fleetsim reports the error itself.
    expect(referenceSchedulerSets("engine:\n  workers: [\n: [\n")).toEqual([]);
    expect(referenceSchedulerSets("")).toEqual([]);
  });
});
