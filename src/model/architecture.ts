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
  /** Layers that are MoE (the others are dense); for the supported families every layer. */
  readonly moeLayers: number;
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
  readonly headDim: number;
  /** Dense MLP intermediate size (0 when every layer is MoE). */
  readonly intermediateSize: number;
  readonly vocabSize: number;
  readonly tieWordEmbeddings: boolean;
  readonly moe: MoeSpec | null;
  /** From config.json per aisimulate.md §4.4; null when the config names none. */
  readonly maxContextLength: number | null;
  readonly weightDtype: WeightDtype;
  readonly kvDtype: KvDtype;
  /** Bytes per weight parameter of the quantized linear layers (1 for FP8, 2 for BF16). */
  readonly weightBytes: number;
  /** Where the config came from: `local:<dir>`, `hf-cache:<path>` or `catalog`. */
  readonly source: string;
}
