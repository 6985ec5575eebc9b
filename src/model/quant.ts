/**
 * Weight and KV-cache precision of a checkpoint, derived the way AIConfigurator/AISimulate derive
 * them (`aisimulate_core/sdk/utils.py _infer_quantization_fields`, `models/helpers.py
 * _infer_quant_modes_from_raw_config`; rules and sources in docs/models.md):
 *
 * 1. The algorithm is the first of `hf_quant_config.json` `quantization.quant_algo`, then
 *    config.json `quantization_config.{quant_algo, quant_method, quantization_method}`.
 * 2. `fp8` with a `weight_block_size` is block-scaled FP8 (`fp8_block`).
 * 3. The KV algorithm is the first of `hf_quant_config` `kv_cache_quant_algo`, then
 *    `quantization_config.{kv_cache_quant_algo, kv_cache_quant_method, kv_cache_dtype}`, then a
 *    compressed-tensors `kv_cache_scheme`.
 * 4. FP8 weights force an FP8 KV cache (the reference sets fmha=fp8 and kvcache=fp8 whenever the
 *    weights are fp8/fp8_block), so every FP8 checkpoint gets 1-byte KV.
 * 5. No quantization info: BF16 weights and BF16 KV.
 *
 * Anything the timing model has no perf data for (NVFP4, MXFP4, INT4/INT8, partial quantization)
 * is a ModelError rather than a silent BF16 fallback.
 */
import type { KvDtype, WeightDtype } from "../hardware/dtypes.js";
import { ModelError } from "./errors.js";

export interface CheckpointDtypes {
  readonly weightDtype: WeightDtype;
  readonly kvDtype: KvDtype;
  /** Bytes per parameter of the quantized linear layers. */
  readonly weightBytes: number;
}

type JsonObject = Record<string, unknown>;

const SUPPORTED_QUANT = "none (BF16), fp8 (per-tensor) and fp8 with weight_block_size (block-scaled)";

export function isJsonObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * @param config the checkpoint's config.json (root; a multimodal `text_config` is consulted for
 *   its `quantization_config` only when the root has none, as the reference does)
 * @param hfQuantConfig the ModelOpt `hf_quant_config.json`, or null when the checkpoint has none
 */
export function checkpointDtypes(id: string, config: JsonObject, hfQuantConfig: unknown): CheckpointDtypes {
  const quantCfg = languageQuantizationConfig(config);
  const hfQuant =
    isJsonObject(hfQuantConfig) && isJsonObject(hfQuantConfig["quantization"])
      ? hfQuantConfig["quantization"]
      : {};

  const weightDtype = weightDtypeOf(id, hfQuant, quantCfg);
  const declaredKv = kvDtypeOf(id, hfQuant, quantCfg);
  // Rule 4: FP8 weights imply FP8 attention and FP8 KV in the reference, even over a declared BF16 KV.
  const kvDtype: KvDtype = weightDtype === "bfloat16" ? (declaredKv ?? "bfloat16") : "fp8";
  return { weightDtype, kvDtype, weightBytes: weightDtype === "bfloat16" ? 2 : 1 };
}

/**
 * The KV-cache dtype the checkpoint itself declares (rule 3), or undefined when it declares none.
 * The reference reports a role's KV precision as from the `checkpoint` when this equals the dtype
 * it uses, and from its own policy otherwise (docs/metrics.md "Provenance, eviction and power").
 */
export function declaredKvDtype(id: string, config: JsonObject, hfQuantConfig: unknown): KvDtype | undefined {
  const quantCfg = languageQuantizationConfig(config);
  const hfQuant =
    isJsonObject(hfQuantConfig) && isJsonObject(hfQuantConfig["quantization"])
      ? hfQuantConfig["quantization"]
      : {};
  return kvDtypeOf(id, hfQuant, quantCfg);
}

export function dtypeBytes(dtype: WeightDtype | KvDtype): number {
  return dtype === "bfloat16" ? 2 : 1;
}

/** Root `quantization_config` first; a nested `text_config` one only when the root has none. */
function languageQuantizationConfig(config: JsonObject): JsonObject {
  if ("quantization_config" in config) {
    return isJsonObject(config["quantization_config"]) ? config["quantization_config"] : {};
  }
  const text = config["text_config"];
  return isJsonObject(text) && isJsonObject(text["quantization_config"]) ? text["quantization_config"] : {};
}

function firstString(...values: unknown[]): string | undefined {
  for (const value of values) {
    if (typeof value === "string" && value.trim() !== "") return value.trim().toLowerCase();
  }
  return undefined;
}

function weightDtypeOf(id: string, hfQuant: JsonObject, quantCfg: JsonObject): WeightDtype {
  const algo = firstString(
    hfQuant["quant_algo"],
    quantCfg["quant_algo"],
    quantCfg["quant_method"],
    quantCfg["quantization_method"],
  );
  if (algo === undefined) return "bfloat16";
  if (algo === "fp8") {
    const blockSize = quantCfg["weight_block_size"];
    return Array.isArray(blockSize) && blockSize.length > 0 ? "fp8_block" : "fp8";
  }
  if (algo === "fp8_block") return "fp8_block";
  if (algo === "compressed-tensors") return compressedTensorsDtype(id, quantCfg);
  throw new ModelError(
    `${id}: quantization '${algo}' is not supported by fleetsim's timing model yet; supported: ${SUPPORTED_QUANT}`,
  );
}

/**
 * compressed-tensors checkpoints: 8-bit float weights are FP8 (`block` strategy: block-scaled).
 * Only whole-model quantization is supported (the lm_head may be ignored: it stays BF16 anyway);
 * the reference models partially quantized layer groups separately, which fleetsim does not.
 */
function compressedTensorsDtype(id: string, quantCfg: JsonObject): WeightDtype {
  const groups = isJsonObject(quantCfg["config_groups"]) ? Object.values(quantCfg["config_groups"]) : [];
  let dtype: WeightDtype | undefined;
  for (const group of groups) {
    const weights = isJsonObject(group) && isJsonObject(group["weights"]) ? group["weights"] : undefined;
    if (weights === undefined) continue;
    const type = String(weights["type"] ?? "").toLowerCase();
    if (weights["num_bits"] === 8 && type.includes("float")) {
      const block =
        String(weights["strategy"] ?? "").toLowerCase() === "block" || Boolean(weights["block_structure"]);
      dtype = block ? "fp8_block" : "fp8";
    } else {
      throw new ModelError(
        `${id}: compressed-tensors ${String(weights["num_bits"])}-bit ${type} weights are not supported by fleetsim's timing model yet; supported: ${SUPPORTED_QUANT}`,
      );
    }
    break;
  }
  if (dtype === undefined) {
    throw new ModelError(`${id}: compressed-tensors quantization_config names no weight format`);
  }
  const ignored = Array.isArray(quantCfg["ignore"]) ? quantCfg["ignore"].map(String) : [];
  const partial = ignored.filter((pattern) => !pattern.toLowerCase().includes("lm_head"));
  if (partial.length > 0) {
    throw new ModelError(
      `${id}: partially quantized checkpoint (ignores ${partial.join(", ")}) is not supported by fleetsim's timing model yet`,
    );
  }
  return dtype;
}

function kvDtypeOf(id: string, hfQuant: JsonObject, quantCfg: JsonObject): KvDtype | undefined {
  const algo = firstString(
    hfQuant["kv_cache_quant_algo"],
    quantCfg["kv_cache_quant_algo"],
    quantCfg["kv_cache_quant_method"],
    quantCfg["kv_cache_dtype"],
  );
  if (algo !== undefined && algo !== "auto") {
    if (algo === "fp8" || algo === "e4m3" || algo === "e5m2") return "fp8";
    if (algo === "fp16" || algo === "float16" || algo === "bf16" || algo === "bfloat16") return "bfloat16";
    throw new ModelError(
      `${id}: KV-cache quantization '${algo}' is not supported by fleetsim's timing model yet; supported: bfloat16, fp8`,
    );
  }
  const scheme = quantCfg["kv_cache_scheme"];
  if (!isJsonObject(scheme)) return undefined;
  const type = String(scheme["type"] ?? "").toLowerCase();
  const bits = scheme["num_bits"];
  if (type.includes("fp8")) return "fp8";
  if (type === "float" && typeof bits === "number") {
    if (bits <= 8) return "fp8";
    if (bits >= 16) return "bfloat16";
  }
  return undefined;
}
