/**
 * Catalog ids added for the fidelity benchmark's public sources (bench/fidelity/README.md):
 * Mixtral-8x7B and Meta-Llama-3 8B/70B, from the supplementary configs of
 * scripts/derive-model-catalog.ts (values of their public Hugging Face config.json).
 */
import { describe, expect, it } from "vitest";
import { lookupCatalog } from "../../src/model/catalog.js";

describe("catalog entries for the fidelity sources", () => {
  it.each([["mistralai/Mixtral-8x7B-v0.1"], ["mistralai/Mixtral-8x7B-Instruct-v0.1"]])(
    "%s resolves to Mixtral-8x7B's dimensions",
    (id) => {
      expect(lookupCatalog(id)).toMatchObject({
        id,
        architecture: "MixtralForCausalLM",
        numLayers: 32,
        hiddenSize: 4096,
        numHeads: 32,
        numKvHeads: 8,
        headDim: 128,
        intermediateSize: 0,
        vocabSize: 32000,
        maxContextLength: 32768,
        weightDtype: "bfloat16",
        kvDtype: "bfloat16",
        moe: { numExperts: 8, topK: 2, expertIntermediateSize: 14336, moeLayers: 32 },
        source: "catalog",
      });
    },
  );

  it.each([
    ["meta-llama/Meta-Llama-3-8B", 32, 4096, 32, 14336],
    ["meta-llama/Meta-Llama-3-8B-Instruct", 32, 4096, 32, 14336],
    ["meta-llama/Meta-Llama-3-70B", 80, 8192, 64, 28672],
    ["meta-llama/Meta-Llama-3-70B-Instruct", 80, 8192, 64, 28672],
  ])("%s has Llama-3.1's dimensions with an 8k context", (id, layers, hidden, heads, inter) => {
    const m = lookupCatalog(id)!;
    expect(m).toMatchObject({
      architecture: "LlamaForCausalLM",
      numLayers: layers,
      hiddenSize: hidden,
      numHeads: heads,
      numKvHeads: 8,
      headDim: 128,
      intermediateSize: inter,
      vocabSize: 128256,
      maxContextLength: 8192,
      weightDtype: "bfloat16",
      kvDtype: "bfloat16",
      moe: null,
    });
    const llama31 = lookupCatalog(id.replace("Meta-Llama-3-", "Meta-Llama-3.1-"))!;
    expect({ ...m, id: "", maxContextLength: 0 }).toEqual({ ...llama31, id: "", maxContextLength: 0 });
  });
});
