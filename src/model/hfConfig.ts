/**
 * Hugging Face `config.json` (+ optional ModelOpt `hf_quant_config.json`) → ModelArchitecture.
 *
 * Only the families fleetsim's timing model prices — dense GQA transformers, every-layer-MoE
 * transformers with full attention, and DeepSeek-V2/V3 (multi-head latent attention, dense first
 * layers, shared + routed experts) — are accepted. Anything else (sparse attention, hybrid
 * Mamba/linear attention, sliding-window attention, other mixed dense/MoE stacks) is a ModelError:
 * a silent fallback to a dense approximation would produce plausible-looking but wrong capacity
 * and latency numbers.
 */
import type { MlaSpec, ModelArchitecture, MoeSpec } from "./architecture.js";
import { ModelError } from "./errors.js";
import { checkpointDtypes, declaredKvDtype, isJsonObject } from "./quant.js";

type JsonObject = Record<string, unknown>;

export const DENSE_ARCHITECTURES = ["LlamaForCausalLM", "MistralForCausalLM", "Qwen3ForCausalLM"] as const;
export const MOE_ARCHITECTURES = ["Qwen3MoeForCausalLM", "MixtralForCausalLM"] as const;
/** Multi-head latent attention with DeepSeek's MoE layout (docs/models.md "DeepSeek (MLA)"). */
export const MLA_ARCHITECTURES = ["DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM"] as const;
export const SUPPORTED_ARCHITECTURES: readonly string[] = [
  ...DENSE_ARCHITECTURES,
  ...MOE_ARCHITECTURES,
  ...MLA_ARCHITECTURES,
];

/** Why well-known unsupported architectures are unsupported, for a useful error message. */
const KNOWN_UNSUPPORTED: Readonly<Record<string, string>> = {
  DeepseekV32ForCausalLM: "MLA + sparse attention",
  DeepseekV4ForCausalLM: "compressed sparse attention",
  KimiK25ForConditionalGeneration: "MLA attention",
  GlmMoeDsaForCausalLM: "MLA + sparse attention",
  NemotronHForCausalLM: "hybrid Mamba layers",
  JambaForCausalLM: "hybrid Mamba layers",
  FalconH1ForCausalLM: "hybrid Mamba layers",
  Qwen3NextForCausalLM: "hybrid linear attention",
  Qwen3_5ForConditionalGeneration: "hybrid linear attention",
  Qwen3_5MoeForConditionalGeneration: "hybrid linear attention",
  GptOssForCausalLM: "alternating sliding-window attention",
  Gemma2ForCausalLM: "alternating sliding-window attention",
  Gemma3ForCausalLM: "alternating sliding-window attention",
  Llama4ForConditionalGeneration: "chunked local attention + interleaved MoE",
  Qwen2MoeForCausalLM: "shared experts",
};

/** DeepSeek routing methods: all pick top-k experts per token (group limits change which, not how many). */
const DEEPSEEK_TOPK = ["greedy", "group_limited_greedy", "noaux_tc"];

/** HF keys for the maximum context, in the reference's order (`aic.py resolve_model_context_length`). */
const CONTEXT_KEYS = [
  "max_position_embeddings",
  "model_max_length",
  "max_sequence_length",
  "seq_length",
  "n_positions",
] as const;

export function unsupportedArchitectureError(id: string, architecture: string, reason: string): ModelError {
  return new ModelError(
    `${id}: architecture ${architecture} (${reason}) is not supported by fleetsim's timing model yet; ` +
      `supported: ${SUPPORTED_ARCHITECTURES.join(", ")}`,
  );
}

/**
 * @param id the model id the user gave (kept on the result for messages and reports)
 * @param configJson parsed config.json
 * @param quantConfigJson parsed hf_quant_config.json, or null when the checkpoint has none
 * @param source where the config came from (`local:<dir>`, `hf-cache:<path>`, `catalog`)
 */
export function architectureFromHfConfig(
  id: string,
  configJson: unknown,
  quantConfigJson: unknown,
  source: string,
): ModelArchitecture {
  if (!isJsonObject(configJson)) throw new ModelError(`${id}: config.json (${source}) is not a JSON object`);
  const architecture = architectureName(id, configJson, source);
  // Multimodal wrappers keep the language model's dimensions under text_config.
  const text = isJsonObject(configJson["text_config"]) ? configJson["text_config"] : configJson;
  rejectUnsupported(id, architecture, text);

  const field = (key: string): number => positiveInt(id, source, text, key);
  const numHeads = field("num_attention_heads");
  const hiddenSize = field("hidden_size");
  const numKvHeads = optionalPositiveInt(id, source, text, "num_key_value_heads") ?? numHeads;
  const headDim =
    optionalPositiveInt(id, source, text, "head_dim") ??
    optionalPositiveInt(id, source, text, "attention_head_dim") ??
    Math.floor(hiddenSize / numHeads);
  const numLayers = field("num_hidden_layers");
  const moe = moeSpec(id, source, architecture, text, numLayers);
  const mla = mlaSpec(id, source, architecture, text);
  const dtypes = checkpointDtypes(id, configJson, quantConfigJson);

  return {
    id,
    architecture,
    numLayers,
    hiddenSize,
    numHeads,
    numKvHeads,
    headDim: mla === null ? headDim : mla.qkNopeHeadDim + mla.qkRopeHeadDim,
    // For MoE families intermediate_size is either the expert size (Mixtral) or unused (Qwen3-MoE);
    // DeepSeek's dense first layers use it.
    intermediateSize: moe === null || moe.moeLayers < numLayers ? field("intermediate_size") : 0,
    vocabSize: field("vocab_size"),
    tieWordEmbeddings: text["tie_word_embeddings"] === true || configJson["tie_word_embeddings"] === true,
    moe,
    mla,
    maxContextLength: contextLengthFromConfig(configJson),
    ...dtypes,
    kvFromCheckpoint: declaredKvDtype(id, configJson, quantConfigJson) === dtypes.kvDtype,
    source,
  };
}

/** `text_config` first (multimodal wrappers), then the root; first positive integer key wins. */
export function contextLengthFromConfig(config: unknown): number | null {
  if (!isJsonObject(config)) return null;
  const scopes = isJsonObject(config["text_config"]) ? [config["text_config"], config] : [config];
  for (const scope of scopes) {
    for (const key of CONTEXT_KEYS) {
      const value = scope[key];
      if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return value;
    }
  }
  return null;
}

function architectureName(id: string, config: JsonObject, source: string): string {
  const list = config["architectures"];
  if (Array.isArray(list) && typeof list[0] === "string" && list[0] !== "") return list[0];
  throw new ModelError(`${id}: config.json (${source}) names no architectures[0]`);
}

function rejectUnsupported(id: string, architecture: string, text: JsonObject): void {
  const reason = unsupportedReason(architecture, text);
  if (reason !== undefined) throw unsupportedArchitectureError(id, architecture, reason);
}

/**
 * Why a config cannot be priced by fleetsim's timing model, or undefined when it can. `text` is
 * the language-model scope of the config (its `text_config`, else the root).
 */
export function unsupportedReason(architecture: string, text: JsonObject): string | undefined {
  const mlaFamily = (MLA_ARCHITECTURES as readonly string[]).includes(architecture);
  // Attention shape beats the architecture name: an MLA config outside the DeepSeek family is
  // MLA whatever class it names, and fleetsim prices MLA only with DeepSeek's layer layout.
  if (!mlaFamily && ("kv_lora_rank" in text || "q_lora_rank" in text)) {
    return KNOWN_UNSUPPORTED[architecture] ?? "MLA attention";
  }
  if (mlaFamily) {
    if (typeof text["index_topk"] === "number") return "MLA + sparse attention";
    if (text["moe_layer_freq"] !== undefined && text["moe_layer_freq"] !== 1) {
      return "MoE layers interleaved with dense ones";
    }
    if (text["topk_method"] !== undefined && !DEEPSEEK_TOPK.includes(String(text["topk_method"]))) {
      return `expert routing topk_method=${String(text["topk_method"])}`;
    }
  }
  if (!SUPPORTED_ARCHITECTURES.includes(architecture)) {
    return KNOWN_UNSUPPORTED[architecture] ?? "unknown layer layout";
  }
  // Qwen-style configs keep a sliding_window value but only use it when use_sliding_window is set;
  // Mistral-style configs use sliding_window whenever it is non-null.
  const qwenStyle = architecture.startsWith("Qwen");
  const window = text["sliding_window"];
  const slides = qwenStyle ? text["use_sliding_window"] === true : typeof window === "number" && window > 0;
  if (slides) return "sliding-window attention";
  if (Array.isArray(text["layer_types"]) && text["layer_types"].some((t) => t !== "full_attention")) {
    return "mixed attention layer types";
  }
  if (architecture === "Qwen3MoeForCausalLM") {
    const denseLayers = text["mlp_only_layers"];
    const step = text["decoder_sparse_step"];
    if ((Array.isArray(denseLayers) && denseLayers.length > 0) || (step !== undefined && step !== 1)) {
      return "mixed dense/MoE layers";
    }
  }
  return undefined;
}

/** Families whose every layer is MoE without shared experts: the keys of their expert count and size. */
const EVERY_LAYER_MOE_KEYS = new Map<string, { readonly experts: string; readonly inter: string }>([
  ["MixtralForCausalLM", { experts: "num_local_experts", inter: "intermediate_size" }],
  ["Qwen3MoeForCausalLM", { experts: "num_experts", inter: "moe_intermediate_size" }],
]);

function moeSpec(
  id: string,
  source: string,
  architecture: string,
  text: JsonObject,
  numLayers: number,
): MoeSpec | null {
  const keys = EVERY_LAYER_MOE_KEYS.get(architecture);
  if (keys !== undefined) {
    return {
      numExperts: positiveInt(id, source, text, keys.experts),
      topK: positiveInt(id, source, text, "num_experts_per_tok"),
      expertIntermediateSize: positiveInt(id, source, text, keys.inter),
      moeLayers: numLayers,
      sharedIntermediateSize: 0,
    };
  }
  if ((MLA_ARCHITECTURES as readonly string[]).includes(architecture)) {
    // DeepSeek: the first `first_k_dense_replace` layers are dense, every later one MoE with
    // `n_shared_experts` always-on experts beside the routed ones.
    const denseLayers = nonNegativeInt(id, source, text, "first_k_dense_replace") ?? 0;
    if (denseLayers >= numLayers) {
      throw new ModelError(
        `${id}: config.json (${source}) has first_k_dense_replace=${denseLayers} ≥ num_hidden_layers=${numLayers}`,
      );
    }
    const expertInter = positiveInt(id, source, text, "moe_intermediate_size");
    return {
      numExperts: positiveInt(id, source, text, "n_routed_experts"),
      topK: positiveInt(id, source, text, "num_experts_per_tok"),
      expertIntermediateSize: expertInter,
      moeLayers: numLayers - denseLayers,
      sharedIntermediateSize: (nonNegativeInt(id, source, text, "n_shared_experts") ?? 0) * expertInter,
    };
  }
  return null;
}

function mlaSpec(id: string, source: string, architecture: string, text: JsonObject): MlaSpec | null {
  if (!(MLA_ARCHITECTURES as readonly string[]).includes(architecture)) return null;
  return {
    qLoraRank: optionalPositiveInt(id, source, text, "q_lora_rank") ?? 0,
    kvLoraRank: positiveInt(id, source, text, "kv_lora_rank"),
    qkNopeHeadDim: positiveInt(id, source, text, "qk_nope_head_dim"),
    qkRopeHeadDim: positiveInt(id, source, text, "qk_rope_head_dim"),
    vHeadDim: positiveInt(id, source, text, "v_head_dim"),
  };
}

function nonNegativeInt(id: string, source: string, scope: JsonObject, key: string): number | undefined {
  const value = scope[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  throw new ModelError(
    `${id}: config.json (${source}) has ${key}=${JSON.stringify(value)}; expected a non-negative integer`,
  );
}

function optionalPositiveInt(id: string, source: string, scope: JsonObject, key: string): number | undefined {
  const value = scope[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return value;
  throw new ModelError(
    `${id}: config.json (${source}) has ${key}=${JSON.stringify(value)}; expected a positive integer`,
  );
}

function positiveInt(id: string, source: string, scope: JsonObject, key: string): number {
  const value = optionalPositiveInt(id, source, scope, key);
  if (value === undefined) throw new ModelError(`${id}: config.json (${source}) lacks ${key}`);
  return value;
}
