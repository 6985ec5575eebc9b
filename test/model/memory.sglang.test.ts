import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { defaultKvCapacityBlocks, SGLANG_RUNTIME_OVERHEAD_FACTOR } from "../../src/model/memory.js";
import { resolveModel } from "../../src/model/resolve.js";

/**
 * An SGLang role's KV capacity against the reference's own memory estimate (aisimulate
 * 0.13.0.dev…0073 with `--detail memory`, the conformance harness's `backend-sglang-*` runs,
 * docs/conformance.md "KV capacity"): its components and its KV bytes and blocks.
 */
const CASES = [
  {
    about: "Llama-3.1-8B, H200, TP 1",
    model: "meta-llama/Meta-Llama-3.1-8B",
    gpu: "h200_sxm",
    tensor: 1,
    reference: {
      runtime: 4_509_715_660,
      comm: 0,
      weights: 16_059_990_016,
      kvBytes: 116_139_103_354,
      blocks: 13_844,
    },
  },
  {
    about: "Qwen3-32B, H100, TP 2",
    model: "Qwen/Qwen3-32B",
    gpu: "h100_sxm",
    tensor: 2,
    reference: {
      runtime: 4_509_715_660,
      comm: 358_612_992,
      weights: 32_761_446_400,
      kvBytes: 40_166_469_140,
      blocks: 4_788,
    },
  },
];

describe("SGLang KV capacity (memory rule `sglang`)", () => {
  for (const c of CASES) {
    it(`${c.about}: the reference's runtime overhead, KV bytes and blocks`, () => {
      const { blocks, breakdown } = defaultKvCapacityBlocks({
        model: resolveModel(c.model),
        gpu: gpuSpec(c.gpu),
        tensor: c.tensor,
        pipeline: 1,
        attentionData: 1,
        moeTensor: c.tensor,
        moeExpert: 1,
        blockSize: 64,
        memoryFraction: 0.9,
        memoryRule: "sglang",
        maxNumTokens: 8192,
      });
      expect(breakdown.runtimeOverheadBytes).toBe(c.reference.runtime);
      expect(breakdown.runtimeOverheadBytes).toBe(
        Math.floor(gpuSpec(c.gpu).otherMemBytes * SGLANG_RUNTIME_OVERHEAD_FACTOR),
      );
      expect(breakdown.commOverheadBytes).toBe(c.reference.comm);
      expect(breakdown.weightsBytes).toBe(c.reference.weights);
      // Float rounding of (capacity − resident) · fraction: the last byte may differ.
      expect(Math.abs(breakdown.kvBudgetBytes - c.reference.kvBytes)).toBeLessThanOrEqual(2);
      expect(blocks).toBe(c.reference.blocks);
    });
  }

  it("leaves vLLM's runtime overhead at the system's other_mem", () => {
    const { breakdown } = defaultKvCapacityBlocks({
      model: resolveModel("meta-llama/Meta-Llama-3.1-8B"),
      gpu: gpuSpec("h200_sxm"),
      tensor: 1,
      pipeline: 1,
      attentionData: 1,
      moeTensor: 1,
      moeExpert: 1,
      blockSize: 64,
      memoryFraction: 0.9,
      maxNumTokens: 8192,
    });
    expect(breakdown.runtimeOverheadBytes).toBe(3_758_096_384);
  });
});
