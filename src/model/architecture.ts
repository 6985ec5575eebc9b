/**
 * What the timing and capacity models need to know about a model, resolved from a Hugging Face
 * `config.json` (+ quantization config) or the built-in catalog. Sizes are of the whole model
 * (not per TP shard).
 */

import type { KvDtype, WeightDtype } from "../hardware/dtypes.js";

export interface MoeSpec {
  readonly numExperts: number;
  /** Experts per token. */
  readonly topK: number;
  /** Intermediate size of one expert. */
  readonly expertIntermediateSize: number;
  /**
   * Layers that are MoE; the first `numLayers − moeLayers` are dense MLPs of `intermediateSize`
   * (DeepSeek's `first_k_dense_replace`). Every layer for Mixtral and Qwen3-MoE.
   */
  readonly moeLayers: number;
  /**
   * Intermediate size of the always-on shared experts of a MoE layer, all of them together
   * (DeepSeek: `n_shared_experts × moe_intermediate_size`); 0 when the family has none.
   */
  readonly sharedIntermediateSize: number;
}

/**
 * Multi-head latent attention (DeepSeek-V2/V3): K and V are projected from one compressed latent
 * of `kvLoraRank` values plus a shared RoPE key of `qkRopeHeadDim`, and only those are cached.
 */
export interface MlaSpec {
  /** Rank of the query compression; 0 when the queries are projected directly (V2-Lite). */
  readonly qLoraRank: number;
  readonly kvLoraRank: number;
  readonly qkNopeHeadDim: number;
  readonly qkRopeHeadDim: number;
  readonly vHeadDim: number;
}

export interface ModelArchitecture {
  /** The id the user gave (`engine.model`). */
  readonly id: string;
  /** HF `architectures[0]`, e.g. `LlamaForCausalLM`. */
  readonly architecture: string;
  readonly numLayers: number;
  readonly hiddenSize: number;
  readonly numHeads: number;
  readonly numKvHeads: number;
  /** Per-head query/key width (MLA: qk_nope_head_dim + qk_rope_head_dim). */
  readonly headDim: number;
  /** Dense MLP intermediate size (0 when every layer is MoE; DeepSeek: its first dense layers). */
  readonly intermediateSize: number;
  readonly vocabSize: number;
  readonly tieWordEmbeddings: boolean;
  readonly moe: MoeSpec | null;
  /** Latent attention; null for standard (MHA/GQA) attention. */
  readonly mla: MlaSpec | null;
  /** From config.json per `ai-dynamo/aisimulate@acb5b46:python/aisimulate/src/aisimulate/aic.py`; null when the config names none. */
  readonly maxContextLength: number | null;
  readonly weightDtype: WeightDtype;
  readonly kvDtype: KvDtype;
  /** Whether the checkpoint declares `kvDtype` itself (else it follows from the weights, rule 4 of model/quant.ts). */
  readonly kvFromCheckpoint: boolean;
  /** Bytes per weight parameter of the quantized linear layers (1 for FP8, 2 for BF16). */
  readonly weightBytes: number;
  /** Where the config came from: `local:<dir>`, `hf-cache:<path>` or `catalog`. */
  readonly source: string;
}
