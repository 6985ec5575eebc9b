/**
 * Block-scaled FP8 linear layers (docs/models.md "Block-scaled FP8 GEMMs"): vLLM keeps the op
 * tables' `fp8_block` cells (the kernel the tables measured); SGLang (DeepGEMM) and TRT-LLM (its
 * own block-scale kernel) are priced with the per-tensor FP8 cells of the same shape. MoE experts
 * are priced from the MoE tables either way.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import type { OpPerfTables } from "../../src/hardware/perfTables.js";
import { resolveModel } from "../../src/model/resolve.js";
import { createTimingModel } from "../../src/timing/index.js";
import { linearGemmDtype, OpLevelTiming } from "../../src/timing/opLevel.js";
import { blockFp8KernelOf } from "../../src/timing/timingSpec.js";
import { syntheticTraffic } from "../helpers/configYaml.js";
import { predictPlanner } from "../helpers/plannerRun.js";
import { tempDir } from "../helpers/specs.js";

const TP1 = { tensor: 1, pipeline: 1, attentionData: 1, moeTensor: 1, moeExpert: 1 };
const NO_HOST = { perPassMs: 0, perSequenceMs: 0 };
const KV_TOTAL = 1 << 20;

/** The tables with the per-tensor FP8 grid hidden (a GPU measured without it). */
function withoutFp8(base: OpPerfTables): OpPerfTables {
  return new Proxy(base, {
    get(target, key, receiver) {
      if (key === "hasGemm") return (d: string) => d !== "fp8" && target.hasGemm(d as "bfloat16");
      const v = Reflect.get(target, key, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

describe("block-scaled FP8 linear layers", () => {
  const h200 = loadCompactTables("h200_sxm");
  const gpu = gpuSpec("h200_sxm");
  const fp8Block = resolveModel("Qwen/Qwen3-32B-FP8");
  const fp8Tensor = { ...fp8Block, weightDtype: "fp8" as const };

  it("picks the kernel by backend: SGLang and TRT-LLM at per-tensor speed, vLLM the measured cells", () => {
    expect(blockFp8KernelOf("sglang")).toBe("per-tensor");
    expect(blockFp8KernelOf("trtllm")).toBe("per-tensor");
    expect(blockFp8KernelOf("vllm")).toBe("measured");
    expect(blockFp8KernelOf(undefined)).toBe("measured");
  });

  it("maps only fp8_block on a per-tensor backend to the per-tensor cells, and only where the tables have them", () => {
    expect(h200.hasGemm("fp8")).toBe(true);
    expect(h200.hasGemm("fp8_block")).toBe(true);
    expect(linearGemmDtype("fp8_block", "per-tensor", h200)).toBe("fp8");
    expect(linearGemmDtype("fp8_block", "measured", h200)).toBe("fp8_block");
    expect(linearGemmDtype("bfloat16", "per-tensor", h200)).toBe("bfloat16");
    expect(linearGemmDtype("fp8", "per-tensor", h200)).toBe("fp8");
    expect(linearGemmDtype("fp8_block", "per-tensor", withoutFp8(h200))).toBe("fp8_block");
  });

  it("prices a per-tensor-backend decode pass as the per-tensor FP8 model and the measured one from the fp8_block cells", () => {
    const measured = new OpLevelTiming(fp8Block, gpu, h200, TP1, NO_HOST);
    const deepgemm = new OpLevelTiming(fp8Block, gpu, h200, TP1, NO_HOST, null, { blockFp8: "per-tensor" });
    const perTensor = new OpLevelTiming(fp8Tensor, gpu, h200, TP1, NO_HOST);
    for (const batch of [1, 8, 64, 256]) {
      const args = [batch, batch * 1000, 1000, KV_TOTAL] as const;
      expect(deepgemm.decodeMs(...args)).toBe(perTensor.decodeMs(...args));
      // The tables' fp8_block cells carry a fixed cost per call at small M (docs/models.md).
      expect(measured.decodeMs(...args)).toBeGreaterThan(deepgemm.decodeMs(...args));
    }
    expect(deepgemm.prefillMs(1, 2048, 0)).toBe(perTensor.prefillMs(1, 2048, 0));
  });

  it("falls back to the fp8_block cells when the tables lack a per-tensor FP8 grid", () => {
    const tables = withoutFp8(h200);
    const measured = new OpLevelTiming(fp8Block, gpu, tables, TP1, NO_HOST);
    const deepgemm = new OpLevelTiming(fp8Block, gpu, tables, TP1, NO_HOST, null, { blockFp8: "per-tensor" });
    expect(deepgemm.decodeMs(32, 32_000, 1000, KV_TOTAL)).toBe(measured.decodeMs(32, 32_000, 1000, KV_TOTAL));
  });

  it("createTimingModel prices SGLang and TRT-LLM roles at per-tensor speed and a vLLM role from the measured cells", async () => {
    const spec = {
      type: "default" as const,
      model: fp8Block,
      gpu,
      perfDatabase: null,
      hostOverhead: { perPassMs: 0, perSequenceMs: 0 },
    };
    const role = { ...TP1, asyncScheduling: false };
    const vllm = await createTimingModel(spec, role);
    const sglang = await createTimingModel(spec, { ...role, backend: "sglang" });
    const trtllm = await createTimingModel(spec, { ...role, backend: "trtllm" });
    const deepgemm = new OpLevelTiming(fp8Block, gpu, h200, TP1, NO_HOST, null, { blockFp8: "per-tensor" });
    // TRT-LLM: its own block-scale kernel at per-tensor speed, and its fused Q/K norm (timing/timingSpec.ts).
    const trtllmKernels = new OpLevelTiming(fp8Block, gpu, h200, TP1, NO_HOST, null, {
      blockFp8: "per-tensor",
      qkNorm: "fused",
    });
    const measured = new OpLevelTiming(fp8Block, gpu, h200, TP1, NO_HOST);
    expect(sglang.decodeMs(16, 16_000, 1000, KV_TOTAL)).toBe(deepgemm.decodeMs(16, 16_000, 1000, KV_TOTAL));
    expect(trtllm.decodeMs(16, 16_000, 1000, KV_TOTAL)).toBe(
      trtllmKernels.decodeMs(16, 16_000, 1000, KV_TOTAL),
    );
    expect(vllm.decodeMs(16, 16_000, 1000, KV_TOTAL)).toBe(measured.decodeMs(16, 16_000, 1000, KV_TOTAL));
  });
});

describe("block-scaled FP8 through predict", () => {
  const borrowed = (backend: "sglang" | "trtllm"): string =>
    `fleetsim: warning: engine.backend '${backend}': its scheduler is simulated, but passes on h200_sxm are priced from the vLLM op tables ` +
    `(the default; timing.op_tables: backend prices them from the ${backend === "sglang" ? "SGLang" : "TensorRT-LLM"} tables); ` +
    "expect kernel-level differences";
  const BORROWED = borrowed("sglang");
  async function tpot(
    model: string,
    backend: "vllm" | "sglang" | "trtllm",
    expectedErr: string,
    timing = "",
  ): Promise<number> {
    const path = join(tempDir(), "config.yaml");
    writeFileSync(
      path,
      `${syntheticTraffic("{type: concurrency, concurrency: 8}", "{requests: 32}", [256, 64])}engine:
  backend: ${backend}
  model: ${model}
  hardware: h200_sxm
  workers:
    aggregated:
      kv_cache: {capacity: {type: fixed, blocks: 64000}}
${timing}`,
    );
    const { doc } = await predictPlanner(path, [], expectedErr);
    return doc.summary["mean_tpot_ms"];
  }

  it("says so in SGLang's borrowed-tables warning, and only for a block-FP8 model", async () => {
    const sglangFp8 = await tpot(
      "Qwen/Qwen3-32B-FP8",
      "sglang",
      `${BORROWED} (block-FP8 linear layers are priced as DeepGEMM, from the per-tensor FP8 cells)\n`,
    );
    await tpot("Qwen/Qwen3-32B", "sglang", `${BORROWED}\n`);
    const vllmFp8 = await tpot("Qwen/Qwen3-32B-FP8", "vllm", "");
    // Four linear GEMMs per layer at ~58 µs (the fp8_block cells at m ≤ 32) vs a few µs each.
    expect(sglangFp8).toBeLessThan(0.7 * vllmFp8);
  }, 60_000);

  it("says so in TRT-LLM's warning too, and prices its block-FP8 model below vLLM's", async () => {
    const trtFp8 = await tpot(
      "Qwen/Qwen3-32B-FP8",
      "trtllm",
      `${borrowed("trtllm")} (block-FP8 linear layers are priced from the per-tensor FP8 cells, as TensorRT-LLM's own block-scale GEMMs measure)\n`,
    );
    await tpot("Qwen/Qwen3-32B", "trtllm", `${borrowed("trtllm")}\n`);
    const vllmFp8 = await tpot("Qwen/Qwen3-32B-FP8", "vllm", "");
    expect(trtFp8).toBeLessThan(0.7 * vllmFp8);
  }, 60_000);

  it("with timing.op_tables: backend, prices block-FP8 from the backend's own measured kernel, silently", async () => {
    const own = "      timing: {type: default, op_tables: backend}\n";
    const vllmFp8 = await tpot("Qwen/Qwen3-32B-FP8", "vllm", "");
    for (const backend of ["sglang", "trtllm"] as const) {
      const note =
        backend === "sglang"
          ? " (block-FP8 linear layers are priced as DeepGEMM, from the per-tensor FP8 cells)"
          : " (block-FP8 linear layers are priced from the per-tensor FP8 cells, as TensorRT-LLM's own block-scale GEMMs measure)";
      const borrowedFp8 = await tpot("Qwen/Qwen3-32B-FP8", backend, `${borrowed(backend)}${note}\n`);
      const ownFp8 = await tpot("Qwen/Qwen3-32B-FP8", backend, "", own);
      // Its own fp8_block cells (DeepGEMM / TensorRT-LLM's block-scale GEMM) run near per-tensor speed.
      expect(ownFp8).toBeLessThan(0.7 * vllmFp8);
      expect(ownFp8).not.toBe(borrowedFp8);
    }
  }, 60_000);
});
