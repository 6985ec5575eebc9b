import { describe, expect, it } from "vitest";
import { ModelError } from "../../src/model/errors.js";
import { architectureFromHfConfig, contextLengthFromConfig } from "../../src/model/hfConfig.js";
import { checkpointDtypes, declaredKvDtype } from "../../src/model/quant.js";

const llama8b = {
  architectures: ["LlamaForCausalLM"],
  hidden_size: 4096,
  intermediate_size: 14336,
  max_position_embeddings: 131072,
  num_attention_heads: 32,
  num_hidden_layers: 32,
  num_key_value_heads: 8,
  vocab_size: 128256,
  tie_word_embeddings: false,
};

const qwen3Moe = {
  architectures: ["Qwen3MoeForCausalLM"],
  head_dim: 128,
  hidden_size: 2048,
  intermediate_size: 6144,
  max_position_embeddings: 40960,
  moe_intermediate_size: 768,
  num_attention_heads: 32,
  num_experts: 128,
  num_experts_per_tok: 8,
  num_hidden_layers: 48,
  num_key_value_heads: 4,
  decoder_sparse_step: 1,
  mlp_only_layers: [],
  sliding_window: null,
  use_sliding_window: false,
  vocab_size: 151936,
};

const parse = (config: unknown, quant: unknown = null) =>
  architectureFromHfConfig("m", config, quant, "test");

describe("architectureFromHfConfig", () => {
  it("reads a Llama config, deriving head_dim as hidden / heads", () => {
    expect(parse(llama8b)).toEqual({
      id: "m",
      architecture: "LlamaForCausalLM",
      numLayers: 32,
      hiddenSize: 4096,
      numHeads: 32,
      numKvHeads: 8,
      headDim: 128,
      intermediateSize: 14336,
      vocabSize: 128256,
      tieWordEmbeddings: false,
      moe: null,
      mla: null,
      maxContextLength: 131072,
      weightDtype: "bfloat16",
      kvDtype: "bfloat16",
      // BF16 KV follows from the BF16 weights: the checkpoint declares no KV dtype.
      kvFromCheckpoint: false,
      weightBytes: 2,
      source: "test",
    });
  });

  it("prefers an explicit head_dim (Qwen3-30B-A3B: 32 heads × 128 over a 2048 hidden size)", () => {
    const m = parse(qwen3Moe);
    expect(m.headDim).toBe(128);
    expect(m.intermediateSize).toBe(0);
    expect(m.moe).toEqual({
      numExperts: 128,
      topK: 8,
      expertIntermediateSize: 768,
      moeLayers: 48,
      sharedIntermediateSize: 0,
    });
  });

  it("reads Mixtral's expert size from intermediate_size", () => {
    const m = parse({
      ...llama8b,
      architectures: ["MixtralForCausalLM"],
      num_local_experts: 8,
      num_experts_per_tok: 2,
      sliding_window: null,
    });
    expect(m.moe).toEqual({
      numExperts: 8,
      topK: 2,
      expertIntermediateSize: 14336,
      moeLayers: 32,
      sharedIntermediateSize: 0,
    });
  });

  it("defaults num_key_value_heads to the head count (MHA)", () => {
    const { num_key_value_heads: _, ...mha } = llama8b;
    expect(parse(mha).numKvHeads).toBe(32);
  });

  it("reads dimensions and the context from text_config first", () => {
    const wrapped = {
      architectures: ["LlamaForCausalLM"],
      max_position_embeddings: 4096,
      text_config: { ...llama8b, architectures: undefined, max_position_embeddings: 8192 },
    };
    const m = parse(wrapped);
    expect(m.numLayers).toBe(32);
    expect(m.maxContextLength).toBe(8192);
  });

  it("accepts MistralForCausalLM without a sliding window", () => {
    const m = parse({ ...llama8b, architectures: ["MistralForCausalLM"], sliding_window: null });
    expect(m.architecture).toBe("MistralForCausalLM");
  });

  it.each([
    [
      { ...llama8b, architectures: ["DeepseekV32ForCausalLM"], kv_lora_rank: 512 },
      /DeepseekV32ForCausalLM \(MLA \+ sparse attention\)/,
    ],
    [
      { ...llama8b, architectures: ["DeepseekV3ForCausalLM"], kv_lora_rank: 512, index_topk: 2048 },
      /DeepseekV3ForCausalLM \(MLA \+ sparse attention\)/,
    ],
    [{ ...llama8b, kv_lora_rank: 512 }, /LlamaForCausalLM \(MLA attention\)/],
    [{ ...llama8b, architectures: ["NemotronHForCausalLM"] }, /NemotronHForCausalLM \(hybrid Mamba layers\)/],
    [{ ...llama8b, architectures: ["GptOssForCausalLM"] }, /sliding-window/],
    [{ ...llama8b, architectures: ["FooForCausalLM"] }, /FooForCausalLM \(unknown layer layout\)/],
    [{ ...llama8b, architectures: ["MistralForCausalLM"], sliding_window: 4096 }, /sliding-window attention/],
    [{ ...qwen3Moe, use_sliding_window: true, sliding_window: 4096 }, /sliding-window attention/],
    [{ ...qwen3Moe, mlp_only_layers: [0, 1] }, /mixed dense\/MoE layers/],
    [{ ...qwen3Moe, decoder_sparse_step: 2 }, /mixed dense\/MoE layers/],
  ])("rejects unsupported layouts clearly (%#)", (config, message) => {
    expect(() => parse(config)).toThrow(ModelError);
    expect(() => parse(config)).toThrow(message);
    expect(() => parse(config)).toThrow(/not supported by fleetsim's timing model yet; supported: /);
  });

  it("rejects configs without the needed fields", () => {
    expect(() => parse({ ...llama8b, num_hidden_layers: undefined })).toThrow(/lacks num_hidden_layers/);
    expect(() => parse({ ...llama8b, hidden_size: "4096" })).toThrow(/hidden_size="4096"/);
    expect(() => parse({ hidden_size: 1 })).toThrow(/names no architectures/);
    expect(() => parse([])).toThrow(/not a JSON object/);
  });
});

describe("contextLengthFromConfig", () => {
  it("uses the reference key order, text_config first", () => {
    expect(contextLengthFromConfig({ n_positions: 1024, seq_length: 2048, model_max_length: 4096 })).toBe(
      4096,
    );
    expect(contextLengthFromConfig({ n_positions: 1024 })).toBe(1024);
    expect(contextLengthFromConfig({ max_position_embeddings: 8, text_config: { seq_length: 16 } })).toBe(16);
    expect(contextLengthFromConfig({ max_position_embeddings: 8, text_config: {} })).toBe(8);
    expect(contextLengthFromConfig({ max_position_embeddings: 2.5 })).toBeNull();
  });
});

describe("checkpoint dtype rules", () => {
  const dtypes = (config: Record<string, unknown>, hfQuant: unknown = null) =>
    checkpointDtypes("m", config, hfQuant);

  it("no quantization info: BF16 weights and KV", () => {
    expect(dtypes(llama8b)).toEqual({ weightDtype: "bfloat16", kvDtype: "bfloat16", weightBytes: 2 });
  });

  it("quant_method fp8 with weight_block_size is block-scaled FP8 with FP8 KV (Qwen3-32B-FP8)", () => {
    const config = {
      quantization_config: {
        activation_scheme: "dynamic",
        fmt: "e4m3",
        quant_method: "fp8",
        weight_block_size: [128, 128],
      },
    };
    expect(dtypes(config)).toEqual({ weightDtype: "fp8_block", kvDtype: "fp8", weightBytes: 1 });
  });

  it("quant_method fp8 without blocks is per-tensor FP8, and FP8 weights force FP8 KV", () => {
    expect(dtypes({ quantization_config: { quant_method: "fp8", activation_scheme: "static" } })).toEqual({
      weightDtype: "fp8",
      kvDtype: "fp8",
      weightBytes: 1,
    });
    // Even a declared BF16 KV cache becomes FP8 (the reference sets kvcache=fp8 with fp8 weights).
    expect(
      dtypes({ quantization_config: { quant_method: "fp8", kv_cache_quant_algo: "bf16" } }).kvDtype,
    ).toBe("fp8");
  });

  it("ModelOpt hf_quant_config FP8 + FP8 KV (nvidia/*-FP8), taking precedence over config.json", () => {
    const hfQuant = {
      quantization: { quant_algo: "FP8", kv_cache_quant_algo: "FP8", exclude_modules: ["lm_head"] },
    };
    expect(dtypes(llama8b, hfQuant)).toEqual({ weightDtype: "fp8", kvDtype: "fp8", weightBytes: 1 });
    expect(dtypes({ quantization_config: { quant_method: "nvfp4" } }, hfQuant).weightDtype).toBe("fp8");
    // The newer in-config form of the same ModelOpt metadata.
    expect(dtypes({ quantization_config: { quant_method: "modelopt", quant_algo: "FP8" } }).weightDtype).toBe(
      "fp8",
    );
  });

  it("the KV dtype the checkpoint declares itself, which the reference reports as from the checkpoint", () => {
    const modelOpt = { quantization: { quant_algo: "FP8", kv_cache_quant_algo: "FP8" } };
    expect(declaredKvDtype("m", llama8b, modelOpt)).toBe("fp8");
    // FP8 weights imply an FP8 KV cache, but the checkpoint did not declare it.
    expect(declaredKvDtype("m", { quantization_config: { quant_method: "fp8" } }, null)).toBeUndefined();
    expect(declaredKvDtype("m", llama8b, null)).toBeUndefined();
    expect(parse(llama8b).kvFromCheckpoint).toBe(false);
  });

  it("an FP8 KV cache on BF16 weights", () => {
    expect(dtypes({}, { quantization: { kv_cache_quant_algo: "FP8" } })).toEqual({
      weightDtype: "bfloat16",
      kvDtype: "fp8",
      weightBytes: 2,
    });
    const scheme = { quantization_config: { kv_cache_scheme: { type: "float", num_bits: 8 } } };
    expect(dtypes(scheme).kvDtype).toBe("fp8");
  });

  it("compressed-tensors FP8", () => {
    const block = {
      quant_method: "compressed-tensors",
      config_groups: { g: { weights: { num_bits: 8, type: "float", strategy: "block" } } },
      ignore: ["lm_head"],
    };
    expect(dtypes({ quantization_config: block }).weightDtype).toBe("fp8_block");
    const partial = { ...block, ignore: ["lm_head", "re:.*mlp.gate$"] };
    expect(() => dtypes({ quantization_config: partial })).toThrow(/partially quantized/);
    const int4 = { ...block, config_groups: { g: { weights: { num_bits: 4, type: "int" } } } };
    expect(() => dtypes({ quantization_config: int4 })).toThrow(/4-bit int weights are not supported/);
  });

  it.each(["nvfp4", "mxfp4", "awq", "gptq", "bitsandbytes"])("rejects %s weights", (method) => {
    expect(() => dtypes({ quantization_config: { quant_method: method } })).toThrow(ModelError);
    expect(() => dtypes({ quantization_config: { quant_method: method } })).toThrow(
      `quantization '${method}' is not supported by fleetsim's timing model yet`,
    );
  });

  it("rejects an FP4 KV cache", () => {
    expect(() => dtypes({}, { quantization: { kv_cache_quant_algo: "NVFP4" } })).toThrow(
      /KV-cache quantization 'nvfp4'/,
    );
  });
});
