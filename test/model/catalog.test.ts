import { describe, expect, it } from "vitest";
import { catalogIds, lookupCatalog } from "../../src/model/catalog.js";

/** [id, layers, hidden, heads, kvHeads, headDim, intermediate, vocab, maxContext, weightDtype, kvDtype] */
type Row = readonly [string, number, number, number, number, number, number, number, number, string, string];

// Hand-checked against the published HF configs (Hugging Face `meta-llama/Llama-3.1-8B-Instruct` for Llama-3.1-8B).
const L8 = [32, 4096, 32, 8, 128, 14336, 128256, 131072] as const;
const L70 = [80, 8192, 64, 8, 128, 28672, 128256, 131072] as const;
const L405 = [126, 16384, 128, 8, 128, 53248, 128256, 131072] as const;
const Q8 = [36, 4096, 32, 8, 128, 12288, 151936, 40960] as const;
const Q32 = [64, 5120, 64, 8, 128, 25600, 151936, 40960] as const;
const Q30 = [48, 2048, 32, 4, 128, 0, 151936, 40960] as const;
const Q235 = [94, 4096, 64, 4, 128, 0, 151936, 40960] as const;
const M22 = [56, 6144, 48, 8, 128, 0, 32000, 65536] as const;
const BF16 = ["bfloat16", "bfloat16"] as const;
const FP8 = ["fp8", "fp8"] as const;
const BLOCK = ["fp8_block", "fp8"] as const;

const ROWS: readonly Row[] = [
  ["meta-llama/Llama-3.1-8B", ...L8, ...BF16],
  ["meta-llama/Meta-Llama-3.1-8B", ...L8, ...BF16],
  ["meta-llama/Llama-3.1-8B-Instruct", ...L8, ...BF16],
  ["meta-llama/Meta-Llama-3.1-8B-Instruct", ...L8, ...BF16],
  ["meta-llama/Llama-3.1-70B", ...L70, ...BF16],
  ["meta-llama/Meta-Llama-3.1-70B-Instruct", ...L70, ...BF16],
  ["meta-llama/Llama-3.3-70B-Instruct", ...L70, ...BF16],
  ["meta-llama/Llama-3.1-405B", ...L405, ...BF16],
  ["meta-llama/Meta-Llama-3.1-405B-Instruct", ...L405, ...BF16],
  ["nvidia/Llama-3.1-8B-Instruct-FP8", ...L8, ...FP8],
  ["nvidia/Llama-3.1-70B-Instruct-FP8", ...L70, ...FP8],
  ["nvidia/Llama-3.1-405B-Instruct-FP8", ...L405, ...FP8],
  ["Qwen/Qwen3-8B", ...Q8, ...BF16],
  ["Qwen/Qwen3-8B-FP8", ...Q8, ...BLOCK],
  ["Qwen/Qwen3-32B", ...Q32, ...BF16],
  ["Qwen/Qwen3-32B-FP8", ...Q32, ...BLOCK],
  ["Qwen/Qwen3-30B-A3B", ...Q30, ...BF16],
  ["Qwen/Qwen3-30B-A3B-FP8", ...Q30, ...BLOCK],
  ["Qwen/Qwen3-235B-A22B", ...Q235, ...BF16],
  ["Qwen/Qwen3-235B-A22B-FP8", ...Q235, ...BLOCK],
  ["mistralai/Mixtral-8x22B-v0.1", ...M22, ...BF16],
  ["mistralai/Mixtral-8x22B-Instruct-v0.1", ...M22, ...BF16],
];

describe("built-in catalog", () => {
  it.each(ROWS.map((row) => [row[0], row] as const))(
    "%s has the published dimensions and dtypes",
    (_, row) => {
      const [id, layers, hidden, heads, kvHeads, headDim, inter, vocab, context, weightDtype, kvDtype] = row;
      const m = lookupCatalog(id)!;
      expect(m).toMatchObject({
        id,
        numLayers: layers,
        hiddenSize: hidden,
        numHeads: heads,
        numKvHeads: kvHeads,
        headDim,
        intermediateSize: inter,
        vocabSize: vocab,
        maxContextLength: context,
        weightDtype,
        kvDtype,
        weightBytes: weightDtype === "bfloat16" ? 2 : 1,
        tieWordEmbeddings: false,
        source: "catalog",
      });
    },
  );

  it("has the MoE shapes of the expert models", () => {
    expect(lookupCatalog("Qwen/Qwen3-30B-A3B")!.moe).toEqual({
      numExperts: 128,
      topK: 8,
      expertIntermediateSize: 768,
      moeLayers: 48,
      sharedIntermediateSize: 0,
    });
    expect(lookupCatalog("Qwen/Qwen3-235B-A22B-FP8")!.moe).toEqual({
      numExperts: 128,
      topK: 8,
      expertIntermediateSize: 1536,
      moeLayers: 94,
      sharedIntermediateSize: 0,
    });
    expect(lookupCatalog("mistralai/Mixtral-8x22B-Instruct-v0.1")!.moe).toEqual({
      numExperts: 8,
      topK: 2,
      expertIntermediateSize: 16384,
      moeLayers: 56,
      sharedIntermediateSize: 0,
    });
    expect(lookupCatalog("meta-llama/Llama-3.1-8B")!.moe).toBeNull();
  });

  it("looks ids up case-insensitively and keeps the id as given", () => {
    const m = lookupCatalog("QWEN/qwen3-32b-fp8")!;
    expect(m.id).toBe("QWEN/qwen3-32b-fp8");
    expect(m.weightDtype).toBe("fp8_block");
    expect(lookupCatalog("Qwen/Qwen3-33B")).toBeUndefined();
  });

  it("resolves DeepSeek-V3 and R1 with latent attention, dense first layers and shared experts", () => {
    for (const id of ["deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1"]) {
      const m = lookupCatalog(id)!;
      expect(m).toMatchObject({ architecture: "DeepseekV3ForCausalLM", numLayers: 61, headDim: 192 });
      expect(m.mla).toEqual({
        qLoraRank: 1536,
        kvLoraRank: 512,
        qkNopeHeadDim: 128,
        qkRopeHeadDim: 64,
        vHeadDim: 128,
      });
      expect(m.moe).toEqual({
        numExperts: 256,
        topK: 8,
        expertIntermediateSize: 2048,
        moeLayers: 58,
        sharedIntermediateSize: 2048,
      });
      expect(m.intermediateSize).toBe(18432);
      expect(m.weightDtype).toBe("fp8_block");
    }
    expect(lookupCatalog("Qwen/Qwen3-32B")!.mla).toBeNull();
  });

  it("covers every id of the former context-length table", () => {
    for (const [id] of ROWS) expect(catalogIds()).toContain(id);
    expect(catalogIds()).toContain("nvidia/Llama-3.3-70B-Instruct-FP8");
  });
});
