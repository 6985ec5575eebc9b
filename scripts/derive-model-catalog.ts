/**
 * Derives src/model/catalog.json from the reference HF configs (default
 * ../shared/model-configs, or the directory given as the first argument):
 *
 *   node --import tsx scripts/derive-model-catalog.ts [configDir]
 *
 * Each catalog id names a config file (its architecture) and a quantization source:
 * - "checkpoint": the dtypes come from that config's own quantization_config and, when present,
 *   the matching `<stem>.hf_quant_config.json` — the reference's rules (src/model/quant.ts).
 * - "id-rule": the id is an FP8 re-release whose config is not in the reference set; its quant
 *   config is reconstructed from the publisher's convention (ID_RULES below) and run through the
 *   same rules. The script checks each rule against the FP8 checkpoints that ARE in the set.
 *
 * Only the fields fleetsim needs are written. The output is plain JSON.stringify(…, 2) so Biome
 * accepts it unchanged (no arrays, so nothing for the formatter to refill).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ModelArchitecture } from "../src/model/architecture.js";
import type {
  CatalogArchitecture,
  CatalogFile,
  CatalogModel,
  CatalogUnsupported,
} from "../src/model/catalog.js";
import { architectureFromHfConfig, unsupportedReason } from "../src/model/hfConfig.js";
import { checkpointDtypes, declaredKvDtype, isJsonObject } from "../src/model/quant.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** Where the reference HF configs live in this workspace. */
export const DEFAULT_CONFIG_DIR = join(repoRoot, "..", "shared", "model-configs");
const outFile = join(repoRoot, "src", "model", "catalog.json");

type QuantSource = "checkpoint" | "id-rule";
/** [catalog id, config file stem, where its dtypes come from] */
type Entry = readonly [string, string, QuantSource];

/**
 * Configs that are not in the reference set, added for the fidelity benchmark's public sources
 * (bench/fidelity/README.md). Only the fields fleetsim reads, with the values of each model's
 * public Hugging Face config.json (huggingface.co/<id>/blob/main/config.json):
 * mistralai/Mixtral-8x7B-v0.1 (the Instruct-v0.1 config has the same dimensions),
 * meta-llama/Meta-Llama-3-8B and meta-llama/Meta-Llama-3-70B (Llama-3.1's dimensions, 8k context,
 * no RoPE scaling; fleetsim does not read RoPE fields); meta-llama/Llama-2-7b-hf (MHA: 32 KV
 * heads), meta-llama/Llama-2-70b-hf and codellama/CodeLlama-34b-Instruct-hf (GQA, 8 KV heads), the
 * models of the calibration runs (bench/fidelity/calibration/README.md; FP16 checkpoints served
 * as BF16, the same 16-bit pricing).
 */
export const SUPPLEMENTARY_CONFIGS: Readonly<Record<string, Record<string, unknown>>> = {
  "mistralai--Mixtral-8x7B-v0.1": {
    architectures: ["MixtralForCausalLM"],
    hidden_size: 4096,
    intermediate_size: 14336,
    max_position_embeddings: 32768,
    num_attention_heads: 32,
    num_experts_per_tok: 2,
    num_hidden_layers: 32,
    num_key_value_heads: 8,
    num_local_experts: 8,
    sliding_window: null,
    tie_word_embeddings: false,
    torch_dtype: "bfloat16",
    vocab_size: 32000,
  },
  "meta-llama--Meta-Llama-3-8B": {
    architectures: ["LlamaForCausalLM"],
    hidden_size: 4096,
    intermediate_size: 14336,
    max_position_embeddings: 8192,
    num_attention_heads: 32,
    num_hidden_layers: 32,
    num_key_value_heads: 8,
    tie_word_embeddings: false,
    torch_dtype: "bfloat16",
    vocab_size: 128256,
  },
  "meta-llama--Llama-2-7b-hf": {
    architectures: ["LlamaForCausalLM"],
    hidden_size: 4096,
    intermediate_size: 11008,
    max_position_embeddings: 4096,
    num_attention_heads: 32,
    num_hidden_layers: 32,
    num_key_value_heads: 32,
    tie_word_embeddings: false,
    torch_dtype: "float16",
    vocab_size: 32000,
  },
  "meta-llama--Llama-2-70b-hf": {
    architectures: ["LlamaForCausalLM"],
    hidden_size: 8192,
    intermediate_size: 28672,
    max_position_embeddings: 4096,
    num_attention_heads: 64,
    num_hidden_layers: 80,
    num_key_value_heads: 8,
    tie_word_embeddings: false,
    torch_dtype: "float16",
    vocab_size: 32000,
  },
  "codellama--CodeLlama-34b-Instruct-hf": {
    architectures: ["LlamaForCausalLM"],
    hidden_size: 8192,
    intermediate_size: 22016,
    max_position_embeddings: 16384,
    num_attention_heads: 64,
    num_hidden_layers: 48,
    num_key_value_heads: 8,
    tie_word_embeddings: false,
    torch_dtype: "bfloat16",
    vocab_size: 32000,
  },
  "meta-llama--Meta-Llama-3-70B": {
    architectures: ["LlamaForCausalLM"],
    hidden_size: 8192,
    intermediate_size: 28672,
    max_position_embeddings: 8192,
    num_attention_heads: 64,
    num_hidden_layers: 80,
    num_key_value_heads: 8,
    tie_word_embeddings: false,
    torch_dtype: "bfloat16",
    vocab_size: 128256,
  },
};

const LLAMA_8B = "meta-llama--Meta-Llama-3.1-8B";
const LLAMA_70B = "meta-llama--Meta-Llama-3.1-70B";
const LLAMA_405B = "meta-llama--Meta-Llama-3.1-405B";
const NVIDIA_70B_FP8 = "nvidia--Llama-3.1-70B-Instruct-FP8";
const QWEN3_32B_FP8 = "Qwen--Qwen3-32B-FP8";

/**
 * Instruct/base and Llama-3.1/3.3-70B pairs share their architecture: their HF configs differ
 * only in generation metadata (eos ids), not in any dimension fleetsim uses.
 */
const ENTRIES: readonly Entry[] = [
  ["meta-llama/Llama-3.1-8B", LLAMA_8B, "checkpoint"],
  ["meta-llama/Llama-3.1-8B-Instruct", LLAMA_8B, "checkpoint"],
  ["meta-llama/Meta-Llama-3.1-8B", LLAMA_8B, "checkpoint"],
  ["meta-llama/Meta-Llama-3.1-8B-Instruct", LLAMA_8B, "checkpoint"],
  ["meta-llama/Llama-3.1-70B", LLAMA_70B, "checkpoint"],
  ["meta-llama/Llama-3.1-70B-Instruct", LLAMA_70B, "checkpoint"],
  ["meta-llama/Meta-Llama-3.1-70B", LLAMA_70B, "checkpoint"],
  ["meta-llama/Meta-Llama-3.1-70B-Instruct", LLAMA_70B, "checkpoint"],
  ["meta-llama/Llama-3.3-70B-Instruct", LLAMA_70B, "checkpoint"],
  ["meta-llama/Llama-3.1-405B", LLAMA_405B, "checkpoint"],
  ["meta-llama/Llama-3.1-405B-Instruct", LLAMA_405B, "checkpoint"],
  ["meta-llama/Meta-Llama-3.1-405B", LLAMA_405B, "checkpoint"],
  ["meta-llama/Meta-Llama-3.1-405B-Instruct", LLAMA_405B, "checkpoint"],
  ["nvidia/Llama-3.1-8B-Instruct-FP8", LLAMA_8B, "id-rule"],
  ["nvidia/Llama-3.1-70B-Instruct-FP8", NVIDIA_70B_FP8, "checkpoint"],
  ["nvidia/Llama-3.3-70B-Instruct-FP8", LLAMA_70B, "id-rule"],
  ["nvidia/Llama-3.1-405B-Instruct-FP8", LLAMA_405B, "id-rule"],
  ["Qwen/Qwen3-8B", "Qwen--Qwen3-8B", "checkpoint"],
  ["Qwen/Qwen3-8B-FP8", "Qwen--Qwen3-8B", "id-rule"],
  ["Qwen/Qwen3-32B", "Qwen--Qwen3-32B", "checkpoint"],
  ["Qwen/Qwen3-32B-FP8", QWEN3_32B_FP8, "checkpoint"],
  ["Qwen/Qwen3-30B-A3B", "Qwen--Qwen3-30B-A3B", "checkpoint"],
  ["Qwen/Qwen3-30B-A3B-FP8", "Qwen--Qwen3-30B-A3B", "id-rule"],
  ["Qwen/Qwen3-235B-A22B", "Qwen--Qwen3-235B-A22B", "checkpoint"],
  ["Qwen/Qwen3-235B-A22B-FP8", "Qwen--Qwen3-235B-A22B", "id-rule"],
  ["mistralai/Mixtral-8x22B-v0.1", "mistralai--Mixtral-8x22B-v0.1", "checkpoint"],
  ["mistralai/Mixtral-8x22B-Instruct-v0.1", "mistralai--Mixtral-8x22B-v0.1", "checkpoint"],
  ["deepseek-ai/DeepSeek-V3", "deepseek-ai--DeepSeek-V3", "checkpoint"],
  // R1 and V3-0324 are V3 checkpoints retrained: their public config.json has V3's dimensions and
  // quantization_config (huggingface.co/deepseek-ai/DeepSeek-R1/blob/main/config.json).
  ["deepseek-ai/DeepSeek-V3-0324", "deepseek-ai--DeepSeek-V3", "checkpoint"],
  ["deepseek-ai/DeepSeek-R1", "deepseek-ai--DeepSeek-V3", "checkpoint"],
  ["deepseek-ai/DeepSeek-R1-0528", "deepseek-ai--DeepSeek-V3", "checkpoint"],
  // Supplementary configs (SUPPLEMENTARY_CONFIGS), for the fidelity benchmark's sources.
  ["mistralai/Mixtral-8x7B-v0.1", "mistralai--Mixtral-8x7B-v0.1", "checkpoint"],
  ["mistralai/Mixtral-8x7B-Instruct-v0.1", "mistralai--Mixtral-8x7B-v0.1", "checkpoint"],
  ["meta-llama/Meta-Llama-3-8B", "meta-llama--Meta-Llama-3-8B", "checkpoint"],
  ["meta-llama/Meta-Llama-3-8B-Instruct", "meta-llama--Meta-Llama-3-8B", "checkpoint"],
  ["meta-llama/Meta-Llama-3-70B", "meta-llama--Meta-Llama-3-70B", "checkpoint"],
  ["meta-llama/Meta-Llama-3-70B-Instruct", "meta-llama--Meta-Llama-3-70B", "checkpoint"],
  // The chat checkpoints have their base model's dimensions.
  ["meta-llama/Llama-2-7b-hf", "meta-llama--Llama-2-7b-hf", "checkpoint"],
  ["meta-llama/Llama-2-7b-chat-hf", "meta-llama--Llama-2-7b-hf", "checkpoint"],
  ["meta-llama/Llama-2-70b-hf", "meta-llama--Llama-2-70b-hf", "checkpoint"],
  ["meta-llama/Llama-2-70b-chat-hf", "meta-llama--Llama-2-70b-hf", "checkpoint"],
  ["codellama/CodeLlama-34b-hf", "codellama--CodeLlama-34b-Instruct-hf", "checkpoint"],
  ["codellama/CodeLlama-34b-Instruct-hf", "codellama--CodeLlama-34b-Instruct-hf", "checkpoint"],
];

/**
 * Quant configs of FP8 re-releases, by publisher. nvidia/*-FP8 are ModelOpt per-tensor FP8 with
 * an FP8 KV cache and a BF16 lm_head (their hf_quant_config.json); Qwen/*-FP8 are fine-grained
 * FP8 with 128×128 weight blocks and dynamic activations (their config.json quantization_config).
 */
const ID_RULES: Readonly<
  Record<string, { config?: Record<string, unknown>; hfQuant?: Record<string, unknown> }>
> = {
  nvidia: {
    hfQuant: {
      producer: { name: "modelopt" },
      quantization: { quant_algo: "FP8", kv_cache_quant_algo: "FP8", exclude_modules: ["lm_head"] },
    },
  },
  qwen: {
    config: {
      quantization_config: {
        activation_scheme: "dynamic",
        fmt: "e4m3",
        quant_method: "fp8",
        weight_block_size: [128, 128],
      },
    },
  },
};

/** Checkpoints in the reference set that the id rules must reproduce exactly. */
const RULE_CHECKS: readonly (readonly [string, string, string])[] = [
  ["nvidia/Llama-3.1-70B-Instruct-FP8", NVIDIA_70B_FP8, LLAMA_70B],
  ["Qwen/Qwen3-32B-FP8", QWEN3_32B_FP8, "Qwen--Qwen3-32B"],
];

interface ConfigFiles {
  readonly config: Record<string, unknown>;
  readonly hfQuant: Record<string, unknown> | null;
}

function loadConfigs(dir: string): Map<string, ConfigFiles> {
  const files = readdirSync(dir).filter((name) => name.endsWith(".json"));
  const configs = new Map<string, ConfigFiles>();
  for (const [stem, config] of Object.entries(SUPPLEMENTARY_CONFIGS))
    configs.set(stem, { config, hfQuant: null });
  for (const name of files.filter((n) => !n.endsWith(".hf_quant_config.json"))) {
    const stem = basename(name, ".json");
    const quantName = `${stem}.hf_quant_config.json`;
    configs.set(stem, {
      config: readObject(join(dir, name)),
      hfQuant: files.includes(quantName) ? readObject(join(dir, quantName)) : null,
    });
  }
  return configs;
}

function readObject(path: string): Record<string, unknown> {
  const value: unknown = JSON.parse(readFileSync(path, "utf8"));
  if (!isJsonObject(value)) throw new Error(`${path}: not a JSON object`);
  return value;
}

type Dtypes = Pick<CatalogModel, "weightDtype" | "kvDtype" | "kvFromCheckpoint">;

function dtypesFor(id: string, files: ConfigFiles, from: QuantSource): Dtypes {
  let config = files.config;
  let hfQuant = files.hfQuant;
  if (from === "id-rule") {
    if (!id.toUpperCase().endsWith("-FP8")) throw new Error(`${id}: the id rule covers only *-FP8 ids`);
    const rule = ID_RULES[id.split("/")[0]!.toLowerCase()];
    if (rule === undefined) throw new Error(`${id}: no FP8 id rule for this publisher`);
    config = { ...files.config, ...rule.config };
    hfQuant = rule.hfQuant ?? null;
  }
  const { weightDtype, kvDtype } = checkpointDtypes(id, config, hfQuant);
  return { weightDtype, kvDtype, kvFromCheckpoint: declaredKvDtype(id, config, hfQuant) === kvDtype };
}

function architectureOf(arch: ModelArchitecture): CatalogArchitecture {
  return {
    architecture: arch.architecture,
    numLayers: arch.numLayers,
    hiddenSize: arch.hiddenSize,
    numHeads: arch.numHeads,
    numKvHeads: arch.numKvHeads,
    headDim: arch.headDim,
    intermediateSize: arch.intermediateSize,
    vocabSize: arch.vocabSize,
    tieWordEmbeddings: arch.tieWordEmbeddings,
    moe: arch.moe,
    mla: arch.mla,
    maxContextLength: arch.maxContextLength,
  };
}

/** Architecture entry for a config stem, or its unsupported marker. */
function archEntry(stem: string, files: ConfigFiles): CatalogArchitecture | CatalogUnsupported {
  const architectures = files.config["architectures"];
  const name = Array.isArray(architectures) ? String(architectures[0]) : "";
  const text = isJsonObject(files.config["text_config"]) ? files.config["text_config"] : files.config;
  const reason = unsupportedReason(name, text);
  if (reason !== undefined) return { architecture: name, unsupported: reason };
  return architectureOf(architectureFromHfConfig(stem, files.config, files.hfQuant, "catalog"));
}

/** The catalog derived from `configDir`; exported so a test can check the committed file is current. */
export function buildCatalog(configDir: string): CatalogFile {
  const configs = loadConfigs(configDir);
  const get = (stem: string): ConfigFiles => {
    const files = configs.get(stem);
    if (files === undefined) throw new Error(`${configDir}: missing ${stem}.json`);
    return files;
  };

  for (const [id, checkpoint, base] of RULE_CHECKS) {
    const fromCheckpoint = JSON.stringify(dtypesFor(id, get(checkpoint), "checkpoint"));
    const fromRule = JSON.stringify(dtypesFor(id, get(base), "id-rule"));
    if (fromCheckpoint !== fromRule) {
      throw new Error(`${id}: id rule gives ${fromRule}, the checkpoint ${fromCheckpoint}`);
    }
  }

  // Architecture key = the model name without org; FP8 checkpoints whose dimensions equal their
  // base model's reuse the base entry (checked), so aliases differ only in dtypes.
  const architectures: Record<string, CatalogArchitecture | CatalogUnsupported> = {};
  const keyOf = new Map<string, string>();
  for (const [, stem] of ENTRIES) {
    if (keyOf.has(stem)) continue;
    const entry = archEntry(stem, get(stem));
    const serialized = JSON.stringify(entry);
    const same = Object.entries(architectures).find(
      ([, existing]) => JSON.stringify(existing) === serialized,
    );
    const key = same?.[0] ?? stem.split("--")[1]!;
    architectures[key] = entry;
    keyOf.set(stem, key);
  }

  const models: Record<string, CatalogModel> = {};
  for (const [id, stem, from] of ENTRIES) {
    models[id] = { arch: keyOf.get(stem)!, ...dtypesFor(id, get(stem), from), quantFrom: from };
  }

  return {
    generatedBy:
      "scripts/derive-model-catalog.ts from the reference HF configs (shared/model-configs) and its SUPPLEMENTARY_CONFIGS",
    architectures,
    models,
  };
}

/** The committed file's exact text for a catalog. */
export function catalogText(catalog: CatalogFile): string {
  return `${JSON.stringify(catalog, null, 2)}\n`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const catalog = buildCatalog(resolve(process.argv[2] ?? DEFAULT_CONFIG_DIR));
  writeFileSync(outFile, catalogText(catalog));
  const counts = `${Object.keys(catalog.models).length} ids, ${Object.keys(catalog.architectures).length} architectures`;
  console.log(`wrote ${outFile}: ${counts}`);
}
