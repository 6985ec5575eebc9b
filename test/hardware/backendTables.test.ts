/**
 * The SGLang and TensorRT-LLM op tables (docs/backends.md "Timing"): the committed compact files
 * derived by scripts/derive-backend-tables.ts, how a backend's tables are completed from vLLM's,
 * and how they are loaded.
 */
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  BACKEND_TABLE_VERSIONS,
  filledGroupsUsed,
  fillFromVllm,
  type OtherBackend,
} from "../../src/hardware/backendTables.js";
import { gpuSpec, measuredGpuIds } from "../../src/hardware/catalog.js";
import { compactTableData, decodeCompact, encodeCompact } from "../../src/hardware/compact.js";
import {
  hasCompactTables,
  loadCompactTables,
  loadCompactTablesWithProvenance,
  readCompactJson,
} from "../../src/hardware/compactTables.js";
import type { AttentionGroup, GridData, MoeTable, OpTableData } from "../../src/hardware/tableData.js";
import { buildOpPerfTables } from "../../src/hardware/tables.js";

const BACKENDS: readonly OtherBackend[] = ["sglang", "trtllm"];

describe("committed backend op tables", () => {
  for (const backend of BACKENDS) {
    for (const gpu of measuredGpuIds()) {
      it(`${backend} ${gpu}: decodes, names its backend and a derivation version`, () => {
        expect(hasCompactTables(gpu, backend)).toBe(true);
        const json = readCompactJson(gpu, backend);
        expect(json.backend).toBe(backend);
        expect(json.gpu).toBe(gpu);
        expect(BACKEND_TABLE_VERSIONS[backend]).toContain(json.perfDataVersion);
        const data = decodeCompact(json);
        expect(data.backend).toBe(backend);
        expect(data.gemm.map((g) => g.dtype)).toContain("bfloat16");
        expect(data.contextAttention.length).toBeGreaterThan(0);
        expect(data.moe.length).toBeGreaterThan(0);
        // Every cell decodes to a positive latency.
        for (const g of data.gemm) expect(g.grid.latencyMs.every((v) => v !== null && v > 0)).toBe(true);
      });
    }
  }

  it("calibration/<backend>/ holds one file per measured GPU and nothing else", () => {
    for (const backend of BACKENDS) {
      const dir = fileURLToPath(new URL(`../../src/hardware/calibration/${backend}/`, import.meta.url));
      expect(readdirSync(dir).sort()).toEqual(measuredGpuIds().map((g) => `${g}.json`));
    }
  });

  it("a memory variant reads its base system's backend tables", () => {
    expect(hasCompactTables("a100_sxm_40gb", "sglang")).toBe(true);
    expect(loadCompactTablesWithProvenance("a100_sxm_40gb", false, "sglang").provenance.backend).toBe(
      "sglang",
    );
  });

  // The backend's own block-FP8 kernel at a decode shape, against the AIConfigurator cells it is
  // derived from (H200: SGLang 0.5.9 DeepGEMM 10.6 µs, TensorRT-LLM 1.2.0rc5 10.9 µs at
  // m 16, n 4096, k 4096; vLLM 0.24's fp8_block cell 58.8 µs; the per-tensor FP8 cell 10.3 µs).
  it("prices a block-FP8 GEMM from the backend's own measured kernel (within 5 % of the silicon cell)", () => {
    const sglang = loadCompactTables("h200_sxm", false, "sglang").gemm("fp8_block", 16, 4096, 4096);
    const trt = loadCompactTables("h200_sxm", false, "trtllm").gemm("fp8_block", 16, 4096, 4096);
    const vllm = loadCompactTables("h200_sxm").gemm("fp8_block", 16, 4096, 4096);
    expect(sglang / 0.0106 - 1).toBeLessThan(0.05);
    expect(sglang / 0.0106 - 1).toBeGreaterThan(-0.05);
    expect(trt / 0.0109 - 1).toBeLessThan(0.05);
    expect(trt / 0.0109 - 1).toBeGreaterThan(-0.05);
    expect(vllm).toBeGreaterThan(4 * sglang);
  });

  it("loads the backend's tables only when asked, and vLLM's otherwise", () => {
    const v = loadCompactTablesWithProvenance("h200_sxm");
    expect(v.provenance).toEqual({ backend: "vllm", version: "0.24.0", filledFromVllm: [] });
    const s = loadCompactTablesWithProvenance("h200_sxm", false, "sglang");
    expect(s.provenance.backend).toBe("sglang");
    expect(s.provenance.version).toBe("0.5.9");
    expect(s.tables.gemm("bfloat16", 64, 4096, 4096)).not.toBe(v.tables.gemm("bfloat16", 64, 4096, 4096));
  });

  it("L40S's SGLang tables take the block-FP8 GEMM they lack from vLLM's, and say so", () => {
    const s = loadCompactTablesWithProvenance("l40s", false, "sglang");
    expect(s.provenance.filledFromVllm).toContain("gemm fp8_block");
    expect(s.tables.gemm("fp8_block", 16, 4096, 4096)).toBe(
      loadCompactTables("l40s").gemm("fp8_block", 16, 4096, 4096),
    );
  });
});

const grid = (axes: number[][], value: number): GridData => ({
  axes,
  latencyMs: new Array(axes.reduce((n, a) => n * a.length, 1)).fill(value),
});
const attn = (kvDtype: "bfloat16" | "fp8", headDim: number, v: number): AttentionGroup => ({
  kvDtype,
  headDim,
  kvHeads: 8,
  grid: grid(
    [
      [8, 32],
      [1, 8],
      [128, 1024],
    ],
    v,
  ),
});
const moe = (dtype: MoeTable["dtype"], v: number): MoeTable => ({
  dtype,
  hiddenSize: 4096,
  interSize: 1536,
  topK: 8,
  numExperts: 128,
  moeTp: 1,
  moeEp: 1,
  grid: grid([[1, 16, 256]], v),
});
function tables(over: Partial<OpTableData>): OpTableData {
  return {
    gpu: "h200_sxm",
    perfDataVersion: "x",
    gemm: [],
    contextAttention: [],
    generationAttention: [],
    allReduceSource: "test",
    allReduce: [],
    moeDistribution: "power_law_1.2",
    moe: [],
    ...over,
  };
}

describe("fillFromVllm", () => {
  const backend = tables({
    backend: "sglang",
    gemm: [
      {
        dtype: "bfloat16",
        grid: grid(
          [
            [1, 8],
            [64, 128],
            [64, 128],
          ],
          1,
        ),
      },
    ],
    contextAttention: [attn("bfloat16", 128, 1)],
    generationAttention: [attn("bfloat16", 128, 1), attn("fp8", 128, 1)],
    allReduce: [{ numGpus: 2, grid: grid([[1, 1024]], 1) }],
    moe: [moe("fp8_block", 1)],
  });
  const vllm = tables({
    gemm: [
      {
        dtype: "bfloat16",
        grid: grid(
          [
            [1, 8],
            [64, 128],
            [64, 128],
          ],
          2,
        ),
      },
      {
        dtype: "fp8",
        grid: grid(
          [
            [1, 8],
            [64, 128],
            [64, 128],
          ],
          2,
        ),
      },
    ],
    contextAttention: [attn("bfloat16", 128, 2), attn("bfloat16", 64, 2)],
    generationAttention: [attn("bfloat16", 128, 2), attn("fp8", 128, 2)],
    allReduce: [
      { numGpus: 2, grid: grid([[1, 1024]], 2) },
      { numGpus: 4, grid: grid([[1, 1024]], 2) },
    ],
    moe: [moe("fp8_block", 2), moe("bfloat16", 2)],
  });
  const filled = fillFromVllm(backend, vllm);

  it("adds only the groups the backend has no rows of, and lists them", () => {
    expect(filled.filledFromVllm).toEqual([
      "gemm fp8",
      "context attention bfloat16 KV head dim 64",
      "all-reduce 4 GPUs",
      "moe bfloat16",
    ]);
    expect(filled.gemm.map((g) => g.dtype)).toEqual(["bfloat16", "fp8"]);
    expect(filled.contextAttention.map((g) => g.headDim)).toEqual([128, 64]);
    expect(filled.generationAttention).toHaveLength(2);
    expect(filled.allReduce.map((t) => t.numGpus)).toEqual([2, 4]);
    expect(filled.moe.map((t) => t.dtype)).toEqual(["fp8_block", "bfloat16"]);
    expect(filled.backend).toBe("sglang");
  });

  it("never replaces what the backend measured", () => {
    expect(filled.gemm[0].grid.latencyMs[0]).toBe(1);
    expect(filled.contextAttention[0].grid.latencyMs[0]).toBe(1);
    expect(filled.generationAttention.every((g) => g.grid.latencyMs[0] === 1)).toBe(true);
    expect(filled.allReduce[0].grid.latencyMs[0]).toBe(1);
    expect(filled.moe[0].grid.latencyMs[0]).toBe(1);
  });

  it("names the filled groups a model reads", () => {
    const dense = { weightDtype: "fp8", kvDtype: "bfloat16", headDim: 64, moe: false };
    expect(filledGroupsUsed(filled, dense)).toEqual([
      "gemm fp8",
      "context attention bfloat16 KV head dim 64",
    ]);
    expect(filledGroupsUsed(filled, { ...dense, weightDtype: "bfloat16", headDim: 128 })).toEqual([]);
    expect(
      filledGroupsUsed(filled, { weightDtype: "bfloat16", kvDtype: "fp8", headDim: 128, moe: true }),
    ).toEqual(["moe bfloat16"]);
  });
});

describe("compact MoE tables with shapes measured to different token counts", () => {
  // Two shapes: one measured to 4,096 tokens, one only to 256 (as in some of AIConfigurator's
  // TensorRT-LLM tables). The compact form keeps one token axis for all shapes; above 256 the
  // shorter shape must answer what the full tables answer there (AIC's utilisation rule), not an
  // extrapolation along the token line.
  const line = (tokens: number[], perToken: number): GridData => ({
    axes: [tokens],
    latencyMs: tokens.map((t) => 0.02 + perToken * t),
  });
  const full = tables({
    gemm: [
      {
        dtype: "bfloat16",
        grid: grid(
          [
            [1, 8],
            [64, 128],
            [64, 128],
          ],
          0.01,
        ),
      },
    ],
    moe: [
      { ...moe("fp8", 0), grid: line([1, 16, 256, 1024, 4096], 1e-4) },
      { ...moe("fp8", 0), numExperts: 64, grid: line([1, 16, 256], 2e-4) },
    ],
  });
  const spec = gpuSpec("h200_sxm");

  it("agrees with the full tables at every token knot, and beyond, above the shorter shape's last count", () => {
    const reference = buildOpPerfTables(full, spec);
    const compact = buildOpPerfTables(decodeCompact(encodeCompact(compactTableData(full, spec))), spec);
    // The compact grid holds the full tables' answer at the union's knots (1,024 and 4,096 for
    // the shorter shape) and extends past the last one by the same rule; between knots it
    // interpolates, as every compact grid does.
    for (const tokens of [1, 16, 256, 1024, 4096, 8192, 20000]) {
      const want = reference.moe(
        { dtype: "fp8", hiddenSize: 4096, interSize: 1536, topK: 8, numExperts: 64, moeTp: 1, moeEp: 1 },
        tokens,
      );
      const got = compact.moe(
        { dtype: "fp8", hiddenSize: 4096, interSize: 1536, topK: 8, numExperts: 64, moeTp: 1, moeEp: 1 },
        tokens,
      );
      expect(Math.abs(got / want - 1)).toBeLessThan(0.01);
    }
  });
});
