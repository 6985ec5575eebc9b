/**
 * Qwen3's per-head Q/K norm in the op-level model (timing/opLevel.ts QK_NORM_MS_PER_LAYER,
 * docs/timing.md "Q/K norm"): a per-layer constant on every pass of a Qwen3-family model run with
 * separate norm kernels (vLLM, SGLang), none for other families or for TensorRT-LLM's fused
 * QK-norm + RoPE kernel. The totals are checked against the reference's op-level estimator as the
 * conformance harness measured it (aisimulate 0.13.0.dev202610160000000073, scripts/reference/estimate.py).
 */
import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { lookupCatalog } from "../../src/model/catalog.js";
import { OpLevelTiming, QK_NORM_MS_PER_LAYER } from "../../src/timing/opLevel.js";
import { qkNormKernelOf } from "../../src/timing/timingSpec.js";

const H200 = loadCompactTables("h200_sxm");
const par = (tensor: number) => ({ tensor, pipeline: 1, attentionData: 1, moeTensor: 1, moeExpert: 1 });

function timing(id: string, tensor: number, backend: "vllm" | "sglang" | "trtllm" = "vllm"): OpLevelTiming {
  return new OpLevelTiming(lookupCatalog(id)!, gpuSpec("h200_sxm"), H200, par(tensor), undefined, null, {
    qkNorm: qkNormKernelOf(backend),
  });
}

const qkNorm = (t: OpLevelTiming, batch: number, context: number) =>
  t.explainDecode(batch, context).ops.find((o) => o.name === "qk_norm");

describe("op-level Q/K norm (Qwen3 family)", () => {
  it("adds one constant per layer to a Qwen3 pass, whatever its tokens, and nothing to Llama's", () => {
    const qwen = timing("Qwen/Qwen3-8B", 1);
    for (const [batch, context] of [
      [1, 128],
      [64, 1024],
      [256, 8192],
    ] as const) {
      const op = qkNorm(qwen, batch, context);
      expect(op?.repeat).toBe(36);
      expect(op?.latencyMs).toBeCloseTo(36 * QK_NORM_MS_PER_LAYER, 12);
    }
    const prefill = qwen.explainPrefill(1, 4096, 0).ops.find((o) => o.name === "qk_norm");
    expect(prefill?.latencyMs).toBeCloseTo(36 * QK_NORM_MS_PER_LAYER, 12);
    expect(qkNorm(timing("meta-llama/Meta-Llama-3.1-8B", 1), 8, 1024)).toBeUndefined();
    // MoE Qwen3 too.
    expect(qkNorm(timing("Qwen/Qwen3-30B-A3B", 2), 8, 1024)?.repeat).toBe(48);
  });

  it("is fused into TensorRT-LLM's RoPE (no separate cost) and separate on vLLM and SGLang", () => {
    expect(qkNorm(timing("Qwen/Qwen3-8B", 1, "trtllm"), 8, 1024)).toBeUndefined();
    expect(qkNorm(timing("Qwen/Qwen3-8B", 1, "sglang"), 8, 1024)).toBeDefined();
    const vllm = timing("Qwen/Qwen3-8B", 1).decodeMs(8, 8 * 1024, 1024, 1e9);
    const trt = timing("Qwen/Qwen3-8B", 1, "trtllm").decodeMs(8, 8 * 1024, 1024, 1e9);
    expect(vllm - trt).toBeCloseTo(36 * QK_NORM_MS_PER_LAYER, 9);
  });

  it("brings Qwen3 decode passes within 2 % of the reference's op-level estimator", () => {
    // [model, TP, batch, context, the reference's ms] from `npm run conformance` (docs/conformance.md).
    const reference = [
      ["Qwen/Qwen3-8B", 1, 8, 1024, 6.230797152070555],
      ["Qwen/Qwen3-32B", 2, 8, 1024, 12.7],
      ["Qwen/Qwen3-32B", 2, 64, 8192, 29.14],
    ] as const;
    for (const [id, tensor, batch, context, ms] of reference) {
      const ours = timing(id, tensor).decodeMs(batch, batch * context, context, 1e9);
      expect(Math.abs(ours - ms) / ms, `${id} TP${tensor} batch ${batch} context ${context}`).toBeLessThan(
        0.02,
      );
    }
  });
});
