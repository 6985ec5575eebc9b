/**
 * The `--set` arguments that give fleetsim the reference's scheduler and pricing conventions in the
 * conformance harness and the reference goldens (scripts/conformance/referenceConventions.ts).
 */
import { describe, expect, it } from "vitest";
import {
  referenceConventionSets,
  referenceSchedulerSets,
} from "../../scripts/conformance/referenceConventions.js";
import { loadYaml, RUNNABLE_ENGINE, RUNNABLE_PD_ENGINE } from "../helpers/configHelpers.js";

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

describe("referenceConventionSets", () => {
  it("adds first-token pricing to every vLLM or TRT-LLM role, and the op-level rules of each backend to default-timing roles", () => {
    expect(
      referenceConventionSets("engine:\n  workers:\n    aggregated:\n      timing: {type: default}\n"),
    ).toEqual([
      "--set",
      "engine.workers.aggregated.scheduler.async_scheduling=false",
      "--set",
      "engine.workers.aggregated.timing.first_token=prefill",
      "--set",
      "engine.workers.aggregated.timing.context_attention_extrapolation=quadratic",
      "--set",
      "engine.workers.aggregated.timing.host_overhead={per_pass_ms: 0, per_sequence_ms: 0}",
      "--set",
      "engine.workers.aggregated.timing.cuda_graph_padding=false",
      "--set",
      "engine.workers.aggregated.timing.mixed_passes=additive",
    ]);
    expect(
      referenceConventionSets("engine: {backend: trtllm, workers: {aggregated: {timing: {type: fixed}}}}\n"),
    ).toEqual(["--set", "engine.workers.aggregated.timing.first_token=prefill"]);
    expect(referenceConventionSets("engine: {backend: trtllm}\n")).toEqual([
      "--set",
      "engine.workers.aggregated.timing.first_token=prefill",
      "--set",
      "engine.workers.aggregated.timing.context_attention_extrapolation=quadratic",
      "--set",
      "engine.workers.aggregated.timing.mixed_passes=additive",
    ]);
    expect(referenceConventionSets("engine: {backend: sglang}\n")).toEqual([
      "--set",
      "engine.workers.aggregated.timing.context_attention_extrapolation=quadratic",
      "--set",
      "engine.workers.aggregated.timing.host_overhead={per_pass_ms: 0, per_sequence_ms: 0}",
    ]);
    expect(referenceConventionSets("engine:\n  workers: [\n: [\n")).toEqual([]);
  });

  it("gives --set arguments that fleetsim accepts", () => {
    for (const engine of [RUNNABLE_ENGINE, RUNNABLE_PD_ENGINE]) {
      const sets = referenceConventionSets(engine).filter((a) => a !== "--set");
      expect(sets.length).toBeGreaterThan(0);
      const spec = loadYaml(engine, { sets });
      const roles =
        spec.engine.mode === "aggregated"
          ? [spec.engine.aggregated]
          : [spec.engine.prefill, spec.engine.decode];
      for (const role of roles) {
        expect(role.firstTokenAtPrefill).toBe(true);
        expect(role.asyncScheduling).toBe(false);
      }
    }
  });
});
