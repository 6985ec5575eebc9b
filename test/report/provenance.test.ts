/**
 * The reference's non-numeric summary keys (docs/metrics.md "Provenance, eviction and power"):
 * what priced each role, the eviction order, and power, which no run estimates.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { predictionSummarySchema } from "../../src/output/summary.js";
import { referenceSummaryKeys } from "../../src/report/provenance.js";
import { loadYaml, RUNNABLE_PD_ENGINE } from "../helpers/configHelpers.js";

const example = (name: string) => fileURLToPath(new URL(`../../examples/${name}`, import.meta.url));
const ROLE = "engine.workers.aggregated";

function keysOf(sets: string[]) {
  return referenceSummaryKeys(loadConfig({ configPath: example("aggregated.yaml"), sets, stack: "engine" }));
}

describe("referenceSummaryKeys", () => {
  it("names the vLLM op tables' version for op-level timing; power has no energy evidence", () => {
    expect(keysOf([])).toEqual({
      kv_eviction_policy: "lru",
      power_w: null,
      power_coverage: 0,
      prediction_provenance: {
        aggregated: {
          estimator: "op_level",
          timing_source: "aic",
          data_version: "0.24.0",
          data_version_unavailable_reason: null,
          data_identity: null,
        },
      },
      // The example's nvidia FP8 checkpoint declares its FP8 KV cache (hf_quant_config).
      kv_cache_precision: { aggregated: { dtype: "fp8", source: "checkpoint" } },
    });
  });

  it("KV precision only where the op-level memory estimate sized the cache, as the reference reports it", () => {
    // BF16 weights, no KV declaration: BF16 by the reference's policy.
    const bf16 = keysOf(["engine.model=meta-llama/Llama-3.1-8B"]);
    expect(bf16.kv_cache_precision).toEqual({
      aggregated: { dtype: "bfloat16", source: "aisimulate_policy" },
    });
    // FP8 weights without a KV declaration: FP8 by the policy (FP8 weights imply an FP8 KV cache).
    expect(
      keysOf(["engine.model=deepseek-ai/DeepSeek-V3", `${ROLE}.parallelism.tensor=8`]).kv_cache_precision,
    ).toEqual({ aggregated: { dtype: "fp8", source: "aisimulate_policy" } });
    // Configured capacity or timing without the op tables: no memory estimate, no key.
    expect(keysOf([`${ROLE}.kv_cache.capacity={type: fixed, blocks: 600}`])).not.toHaveProperty(
      "kv_cache_precision",
    );
    expect(keysOf([`${ROLE}.timing={type: polynomial}`])).not.toHaveProperty("kv_cache_precision");
  });

  it("says why fixed and polynomial timing have no data version, with power coverage null", () => {
    const fixed = keysOf([`${ROLE}.timing={type: fixed, prefill_ms: 20, decode_ms: 8}`]);
    expect(fixed.power_coverage).toBeNull();
    expect(fixed.prediction_provenance["aggregated"]).toEqual({
      estimator: "fixed",
      timing_source: "configured",
      data_version: null,
      data_version_unavailable_reason: "configured timing does not use performance data",
    });
    const poly = keysOf([`${ROLE}.timing={type: polynomial}`]);
    expect(poly.power_coverage).toBeNull();
    expect(poly.prediction_provenance["aggregated"]?.estimator).toBe("polynomial");
    expect(poly.prediction_provenance["aggregated"]?.timing_source).toBe("built_in");
  });

  it("names the tables that price the role: vLLM's for SGLang by default, SGLang's with op_tables: backend", () => {
    const byDefault = keysOf(["engine.backend=sglang"]);
    expect(byDefault.prediction_provenance["aggregated"]?.data_version).toBe("0.24.0");
    const own = keysOf(["engine.backend=sglang", `${ROLE}.timing={type: default, op_tables: backend}`]);
    expect(own.prediction_provenance["aggregated"]?.data_version).toBe("0.5.9");
  });

  it("has one entry per role of a disaggregated deployment, and fits the summary's schema", () => {
    const keys = referenceSummaryKeys(loadYaml(RUNNABLE_PD_ENGINE, { stack: "engine" }));
    expect(Object.keys(keys.prediction_provenance)).toEqual(["prefill", "decode"]);
    const shape = predictionSummarySchema.pick({
      kv_eviction_policy: true,
      power_w: true,
      power_coverage: true,
      prediction_provenance: true,
    });
    expect(shape.parse(keys)).toEqual(keys);
  });
});
