/**
 * GPUs per worker as seed 000 defines them: `tensor` × `attention_data` of the role's parallelism,
 * for the Planner's GPU budget and `summary.gpu_hours`; pipeline stages add none (the reference's
 * `_engine_caps` counts TP × attention DP).
 */
import { describe, expect, it } from "vitest";
import { capabilitiesOf } from "../../src/autoscale/plannerSetup.js";
import { runPrediction } from "../../src/pipeline/index.js";
import { loadYaml } from "../helpers/configHelpers.js";
import { engineYaml, fixedTiming } from "../helpers/configYaml.js";

const TRACE = "trace.jsonl";
const ROWS = Array.from({ length: 30 }, (_, i) =>
  JSON.stringify({ timestamp: i * 200, input_length: 256, output_length: 8, hash_ids: [i + 1] }),
).join("\n");

function yaml(parallelism: string, planner = ""): string {
  return `traffic:
  source: {type: trace, format: mooncake, paths: [${TRACE}]}
${engineYaml({
  model: "Qwen/Qwen3-8B",
  contextLength: 4096,
  parallelism,
  kvCache: "{capacity: {type: fixed, blocks: 2000}}",
  timing: fixedTiming(20, 5),
})}${planner}`;
}

describe("GPUs per worker = tensor × attention_data", () => {
  it("pipeline stages do not multiply a worker's GPUs", () => {
    const role = (p: string) => {
      const engine = loadYaml(yaml(p), { files: { [TRACE]: ROWS } }).engine;
      if (engine.mode !== "aggregated") throw new Error("aggregated expected");
      return engine.aggregated.gpusPerWorker;
    };
    expect(role("{tensor: 2, pipeline: 2, attention_data: 2}")).toBe(4);
    expect(role("{tensor: 1, pipeline: 4}")).toBe(1);
    expect(role("{tensor: 4, attention_data: 1}")).toBe(4);
  });

  it("gpu_hours bills a pipeline-parallel worker at tensor × attention_data GPUs", async () => {
    const spec = loadYaml(yaml("{replicas: 2, tensor: 2, pipeline: 2}"), { files: { [TRACE]: ROWS } });
    const { summary } = (await runPrediction(spec, { capturePerRequest: false })).prediction;
    expect(summary.decode_gpus_per_worker).toBe(2);
    expect(summary.gpu_hours).toBeCloseTo((summary.decode_worker_seconds * 2) / 3600, 12);
    expect(summary.decode_worker_seconds).toBeCloseTo((2 * summary.duration_ms) / 1000, 6);
  });

  it("the Planner's GPU budget counts tensor × attention_data per worker", () => {
    const spec = loadYaml(yaml("{replicas: 2, tensor: 2, pipeline: 2, attention_data: 1}"), {
      files: { [TRACE]: ROWS },
    });
    if (spec.engine.mode !== "aggregated") throw new Error("aggregated expected");
    // The budget math prices a replica at gpu_cost_per_replica ?? num_gpu (`ai-dynamo/dynamo@0272cbd:components/src/dynamo/planner/core/types.py`).
    const caps = capabilitiesOf(spec.engine.aggregated);
    expect([caps.numGpu, caps.gpuCostPerReplica]).toEqual([2, 2]);
  });
  it("a disaggregated role with attention DP: budget and gpu_hours count tensor × attention_data", async () => {
    const pd = `traffic:
  source: {type: trace, format: mooncake, paths: [${TRACE}]}
engine:
  mode: disaggregated
  model: Qwen/Qwen3-8B
  hardware: h200_sxm
  context_length: 4096
  workers:
    prefill:
      parallelism: {tensor: 1, attention_data: 2}
      kv_cache: {capacity: {type: fixed, blocks: 2000}}
      timing: {type: fixed, prefill_ms: 20, decode_ms: 5}
    decode:
      parallelism: {tensor: 2, attention_data: 4}
      kv_cache: {capacity: {type: fixed, blocks: 2000}}
      timing: {type: fixed, prefill_ms: 20, decode_ms: 5}
`;
    const spec = loadYaml(pd, { files: { [TRACE]: ROWS } });
    if (spec.engine.mode !== "disaggregated") throw new Error("disaggregated expected");
    expect(capabilitiesOf(spec.engine.prefill).numGpu).toBe(2);
    expect(capabilitiesOf(spec.engine.decode).numGpu).toBe(8);
    const { summary } = (await runPrediction(spec, { capturePerRequest: false })).prediction;
    expect(summary.completed_requests).toBe(30);
    expect([summary.prefill_gpus_per_worker, summary.decode_gpus_per_worker]).toEqual([2, 8]);
    expect(summary.gpu_hours).toBeCloseTo(
      (summary.prefill_worker_seconds * 2 + summary.decode_worker_seconds * 8) / 3600,
      12,
    );
  });
});
