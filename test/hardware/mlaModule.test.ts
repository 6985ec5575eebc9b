/**
 * vLLM's measured MLA module (src/hardware/mlaModule.ts, docs/models.md "DeepSeek (MLA)"): the
 * committed tables, looked up as the reference looks them up, and the op-level model pricing a
 * DeepSeek layer's attention block from them on vLLM.
 */
import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { mlaModuleTable } from "../../src/hardware/mlaModule.js";
import { lookupCatalog } from "../../src/model/catalog.js";
import { kernelsOf } from "../../src/timing/kernels.js";
import { OpLevelTiming } from "../../src/timing/opLevel.js";

/**
 * The reference's figures for one layer's block, ms: its op-level estimator (aisimulate 0.13.0,
 * `RustForwardPassPerfModel.static_phase_diagnostics`, DeepSeek-V3 on vLLM, FP8 cache, block-FP8
 * linear layers) reports `generation_mla_block` / `context_mla_block` for all 61 layers; each is
 * that figure / 61. Columns: gpu, tensor, phase, batch, tokens (decode: context; prefill: prompt
 * incl. prefix), prefix, ms. Decode batches 3 and 300 and contexts 5,000 and prompts of 100 and 3,000
 * tokens lie between the measured points; a prefix scales a prompt by 1 − (prefix / prompt)².
 */
const REFERENCE = `
h200_sxm 8 decode 1 1024 0 0.1133
h200_sxm 8 decode 3 5000 0 0.12325
h200_sxm 8 decode 64 5000 0 0.186194
h200_sxm 8 decode 300 1024 0 0.235227
h200_sxm 8 prefill 1 100 0 0.116554
h200_sxm 8 prefill 1 1024 512 0.177525
h200_sxm 8 prefill 5 3000 512 2.212774
h200_sxm 4 decode 3 1024 0 0.1279
h200_sxm 4 prefill 5 1024 512 0.846731
b200_sxm 8 decode 300 5000 0 0.223755
b200_sxm 8 prefill 5 3000 0 0.840163
h100_sxm 8 decode 64 5000 0 0.198222
`
  .trim()
  .split("\n")
  .map((line) => {
    const [gpu, tp, phase, ...n] = line.split(" ");
    const [batch, tokens, prefix, ms] = n.map(Number) as [number, number, number, number];
    return { gpu: gpu!, tp: Number(tp), phase: phase as "decode" | "prefill", batch, tokens, prefix, ms };
  });

describe("vLLM's measured MLA module", () => {
  it("matches the reference's block within 1 % at measured and interpolated points", () => {
    for (const { gpu, tp, phase, batch, tokens, prefix, ms } of REFERENCE) {
      const t = mlaModuleTable(gpu, 128 / tp, "fp8", "fp8_block")!;
      const got =
        phase === "decode" ? t.decodeMs(batch, tokens) : t.prefillMs(batch, tokens - prefix, prefix);
      expect(Math.abs(got / ms - 1), `${gpu} TP${tp} ${phase} ${batch}×${tokens}`).toBeLessThan(0.01);
    }
  });

  it("exists only where the tables hold the shape", () => {
    expect(mlaModuleTable("h200_sxm", 16, "fp8", "fp8_block")).not.toBeNull();
    expect(mlaModuleTable("h200_sxm", 16, "bfloat16", "bfloat16")).not.toBeNull();
    // 128 heads over TP 3 is not a measured head count; NVFP4 linear layers are not on H200; A100
    // has no MLA rows.
    expect(mlaModuleTable("h200_sxm", 128 / 3, "fp8", "fp8_block")).toBeNull();
    expect(mlaModuleTable("h200_sxm", 16, "fp8", "nvfp4")).toBeNull();
    expect(mlaModuleTable("a100_sxm", 16, "bfloat16", "bfloat16")).toBeNull();
  });

  it("grows with the batch and the context beyond the measured range, prompts by the role's rule", () => {
    const t = mlaModuleTable("h200_sxm", 16, "fp8", "fp8_block", "quadratic")!;
    expect(t.decodeMs(2048, 1024)).toBeCloseTo(2 * t.decodeMs(1024, 1024), 9);
    expect(t.decodeMs(1, 262_143)).toBeCloseTo(2 * t.decodeMs(1, 131_071), 9);
    // The reference scales the longest measured prompt by the square of the length ratio.
    expect(t.prefillMs(1, 65_536, 0)).toBeCloseTo(4 * t.prefillMs(1, 32_768, 0), 9);
    const sqrt = mlaModuleTable("h200_sxm", 16, "fp8", "fp8_block", "sqrt")!;
    expect(sqrt.prefillMs(1, 65_536, 0)).toBeLessThan(t.prefillMs(1, 65_536, 0));
    expect(sqrt.prefillMs(1, 65_536, 0)).toBeGreaterThan(2 * t.prefillMs(1, 32_768, 0));
    expect(t.prefillMs(0, 100, 0)).toBe(0);
    expect(t.decodeMs(0, 100)).toBe(0);
  });
});

describe("a DeepSeek-V3 pass on vLLM", () => {
  const V3 = lookupCatalog("deepseek-ai/DeepSeek-V3")!;
  const tables = loadCompactTables("h200_sxm");
  const par = { tensor: 8, pipeline: 1, attentionData: 1, moeTensor: 1, moeExpert: 8 };
  const timing = (backend: "vllm" | "sglang") =>
    new OpLevelTiming(
      V3,
      gpuSpec("h200_sxm"),
      tables,
      par,
      undefined,
      null,
      kernelsOf(backend, "vllm", V3, "h200_sxm", 8, { contextBeyond: "sqrt", builtInTables: true }),
    );

  it("prices each layer's attention block from the module, not op by op", () => {
    const decode = timing("vllm").explainDecode(32, 2048);
    const names = decode.ops.map((o) => o.name);
    expect(names).toContain("generation_mla_module");
    for (const op of ["mla_down_gemm", "q_up_gemm", "proj_gemm", "mla_bmm_pre", "generation_attention"]) {
      expect(names).not.toContain(op);
    }
    const block = decode.ops.find((o) => o.name === "generation_mla_module")!;
    const t = mlaModuleTable("h200_sxm", 16, "fp8", "fp8_block")!;
    expect(block.repeat).toBe(61);
    expect(block.latencyMs).toBeCloseTo(61 * t.decodeMs(32, 2048), 9);
    const prefill = timing("vllm").explainPrefill(2, 1024, 512);
    expect(prefill.ops.find((o) => o.name === "context_mla_module")!.latencyMs).toBeCloseTo(
      61 * t.prefillMs(2, 1024, 512),
      9,
    );
    expect(prefill.ops.some((o) => o.name === "kv_up_gemm")).toBe(false);
    // A pass still costs what its breakdown says.
    expect(timing("vllm").decodeMs(32, 0, 2048, 0)).toBeCloseTo(decode.totalMs, 9);
  });

  it("keeps the separate ops on SGLang, on a --perf-database run and where the module lacks the shape", () => {
    expect(
      timing("sglang")
        .explainDecode(32, 2048)
        .ops.map((o) => o.name),
    ).toContain("mla_down_gemm");
    expect(
      kernelsOf("vllm", "vllm", V3, "h200_sxm", 8, { contextBeyond: "sqrt", builtInTables: false }).mlaModule,
    ).toBeNull();
    expect(
      kernelsOf("vllm", "vllm", V3, "a100_sxm", 8, { contextBeyond: "sqrt", builtInTables: true }).mlaModule,
    ).toBeNull();
    const llama = lookupCatalog("meta-llama/Llama-3.1-8B")!;
    expect(
      kernelsOf("vllm", "vllm", llama, "h200_sxm", 1, { contextBeyond: "sqrt", builtInTables: true })
        .mlaModule,
    ).toBeNull();
  });
});
