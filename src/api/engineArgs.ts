/**
 * Engine arguments (the reference's canonical Python engine configuration: `MockEngineArgs`
 * fields, flat or as `{engine: {...}}`, `ai-dynamo/dynamo@57040c1:lib/mocker/src/common/protocols.rs`) → the `engine` section of the config.
 *
 * Defaults are the mocker's, not the YAML's, so that a mapping copied from a Python script
 * means what it meant there: `max_num_seqs` 256 for every role (the YAML gives prefill 1),
 * `kv_transfer_timing_mode` `full_prompt`, and without a worker identity (model + GPU system)
 * polynomial timing, 16384 KV blocks and no context limit. With an identity (an external
 * `timing_model` config or `aic_model_path` + `aic_system`) the worker is priced by the op-level
 * model and its KV capacity comes from GPU memory, as `timing: {type: default}` does in YAML.
 */
import { isMapping, type Mapping } from "../config/mapping.js";
import type { WorkerRole } from "../util/workerRole.js";
import type { ConfigDraft } from "./configDraft.js";
import { type OptionIssues, show } from "./issues.js";
import { optionKeys } from "./optionKeys.js";
import type { EngineArgs, ExternalTimingConfig } from "./options.js";

/** The mocker's `num_gpu_blocks` default (`ai-dynamo/dynamo@57040c1:lib/mocker/src/common/protocols.rs`). */
export const MOCKER_DEFAULT_GPU_BLOCKS = 16384;
/** The mocker's `max_num_seqs` default, for every role. */
export const MOCKER_DEFAULT_MAX_NUM_SEQS = 256;
/** `max_model_len: None` (no limit) when nothing names a model. */
const NO_CONTEXT_LIMIT = 2_147_483_647;
/** Model / GPU ids when the arguments name none: never resolved (polynomial timing, fixed capacity). */
export const UNSPECIFIED = "unspecified";

export const ENGINE_ARG_KEYS = optionKeys<EngineArgs>()([
  "engine_type",
  "backend",
  "block_size",
  "max_num_batched_tokens",
  "max_num_seqs",
  "enable_prefix_caching",
  "enable_chunked_prefill",
  "num_gpu_blocks",
  "gpu_memory_utilization",
  "dp_size",
  "tensor_parallel_size",
  "pipeline_parallel_size",
  "startup_time",
  "max_model_len",
  "worker_type",
  "timing_model",
  "kv_bytes_per_token",
  "kv_transfer_bandwidth",
  "kv_transfer_timing_mode",
  "aic_backend",
  "aic_system",
  "aic_model_path",
  "aic_backend_version",
  "aic_tp_size",
  "aic_attention_dp_size",
  "aic_pp_size",
  "aic_moe_tp_size",
  "aic_moe_ep_size",
  "speedup_ratio",
  "decode_speedup_ratio",
  "preemption_mode",
]);

export const EXTERNAL_CONFIG_KEYS = optionKeys<ExternalTimingConfig>()([
  "model",
  "system",
  "backend",
  "backend_version",
  "worker_type",
  "tp",
  "attention_dp",
  "pp",
  "moe_tp",
  "moe_ep",
  "kv_block_size",
]);

/** A value and the option path it came from. */
interface Sourced<T> {
  readonly value: T;
  readonly option: string;
}

/** What one role's arguments say about the whole engine (merged across roles by `translateEngine`). */
interface RoleFacts {
  readonly model?: Sourced<string>;
  readonly system?: Sourced<string>;
  readonly backend?: Sourced<unknown>;
  readonly backendVersion?: Sourced<unknown>;
  readonly maxModelLen?: Sourced<unknown>;
  readonly kvBytesPerToken?: Sourced<unknown>;
  readonly kvTransferBandwidth?: Sourced<unknown>;
  readonly kvTransferTimingMode?: Sourced<unknown>;
  /** GPUs per worker as the Planner counts them: tensor × attention data parallel. */
  readonly gpusPerWorker: number;
  /** The arguments name the worker's model and GPU (an AIS/AIC identity, `ai-dynamo/dynamo@c78c42c:components/src/dynamo/replay/planner.py`). */
  readonly identified: boolean;
}

export interface RoleInput {
  readonly role: WorkerRole;
  /** The option's name (`extraEngineArgs`, `prefillEngineArgs`, `decodeEngineArgs`). */
  readonly option: string;
  readonly args: unknown;
  readonly replicas: Sourced<unknown>;
}

export interface EngineFacts {
  readonly mode: "aggregated" | "disaggregated";
  /** GPUs per worker of each role present (tensor × attention DP). */
  readonly gpusPerWorker: Partial<Record<WorkerRole, number>>;
  /**
   * Every role's arguments name its model and GPU (an AIS/AIC identity). Without one the
   * reference cannot bootstrap the Planner's perf model (`not_configured_load_only`).
   */
  readonly identified: boolean;
}

/**
 * Writes `engine` into the draft from one role (aggregated) or two (prefill + decode); argument
 * errors go to `issues`. `modelName` is the model when the arguments name none.
 */
export function translateEngine(
  roles: readonly RoleInput[],
  modelName: Sourced<unknown> | undefined,
  draft: ConfigDraft,
  issues: OptionIssues,
): EngineFacts {
  const mode = roles.length === 1 ? "aggregated" : "disaggregated";
  draft.set(["engine", "mode"], mode, roles.map((r) => r.option).join(" + "));
  const facts = roles.map((r) => translateRole(r, draft, issues));
  const gpusPerWorker: Partial<Record<WorkerRole, number>> = {};
  roles.forEach((r, i) => {
    gpusPerWorker[r.role] = facts[i].gpusPerWorker;
  });

  const model = agreed(facts, "model", issues) ?? modelName;
  draft.set(["engine", "model"], model?.value ?? UNSPECIFIED, model?.option ?? "modelName");
  const system = agreedSystem(roles, facts, draft);
  draft.set(["engine", "hardware"], system?.value ?? UNSPECIFIED, system?.option ?? roles[0].option);
  const backend = agreed(facts, "backend", issues);
  if (backend !== undefined) draft.set(["engine", "backend"], backend.value, backend.option);
  const version = agreed(facts, "backendVersion", issues);
  if (version !== undefined) draft.set(["engine", "backend_version"], version.value, version.option);

  const maxModelLen = agreed(facts, "maxModelLen", issues);
  if (maxModelLen !== undefined && maxModelLen.value !== null) {
    draft.set(["engine", "context_length"], maxModelLen.value, maxModelLen.option);
  } else {
    // None: the model's maximum when a model is named (YAML `max`), else no limit (the mocker's None).
    const option = maxModelLen?.option ?? `${roles[0].option}.max_model_len`;
    draft.set(["engine", "context_length"], model === undefined ? NO_CONTEXT_LIMIT : "max", option);
  }

  const transferKeys = ["kvBytesPerToken", "kvTransferBandwidth", "kvTransferTimingMode"] as const;
  if (mode === "aggregated") {
    for (const key of transferKeys) {
      const found = facts[0][key];
      if (found !== undefined) {
        issues.add(
          found.option,
          "is only valid for a disaggregated deployment (prefillEngineArgs + decodeEngineArgs)",
        );
      }
    }
  } else {
    const bytes = agreed(facts, "kvBytesPerToken", issues);
    if (bytes !== undefined && bytes.value !== null) {
      draft.set(["engine", "kv_transfer", "bytes_per_token"], bytes.value, bytes.option);
    }
    const bandwidth = agreed(facts, "kvTransferBandwidth", issues);
    // Omitted, null or 0: the hand-off takes no time (`ai-dynamo/dynamo@57040c1:lib/mocker/src/common/protocols.rs`).
    const gbps = bandwidth === undefined || bandwidth.value === 0 ? null : bandwidth.value;
    draft.set(
      ["engine", "kv_transfer", "bandwidth_gb_per_second"],
      gbps,
      bandwidth?.option ?? `${roles[0].option}.kv_transfer_bandwidth`,
    );
    const timingMode = agreed(facts, "kvTransferTimingMode", issues);
    draft.set(
      ["engine", "kv_transfer", "timing_mode"],
      timingMode?.value ?? "full_prompt",
      timingMode?.option ?? `${roles[0].option}.kv_transfer_timing_mode`,
    );
  }
  return { mode, gpusPerWorker, identified: facts.every((f) => f.identified) };
}

/** Unwraps the canonical `{engine: {...}}` form; returns the arguments and their option prefix. */
function unwrap(input: RoleInput, issues: OptionIssues): { args: Mapping; prefix: string } | undefined {
  const { args, option } = input;
  if (args === undefined) return { args: {}, prefix: option };
  if (!isMapping(args)) {
    issues.add(option, `must be a mapping of engine arguments, got ${show(args)}`);
    return undefined;
  }
  if (!Object.hasOwn(args, "engine")) return { args, prefix: option };
  const extra = Object.keys(args).filter((k) => k !== "engine");
  if (extra.length > 0) {
    issues.add(option, `the canonical form {engine: {...}} takes no other key, got ${show(extra)}`);
    return undefined;
  }
  const inner = args["engine"];
  if (!isMapping(inner)) {
    issues.add(`${option}.engine`, `must be a mapping of engine arguments, got ${show(inner)}`);
    return undefined;
  }
  return { args: inner, prefix: `${option}.engine` };
}

function translateRole(input: RoleInput, draft: ConfigDraft, issues: OptionIssues): RoleFacts {
  const unwrapped = unwrap(input, issues);
  if (unwrapped === undefined) return { gpusPerWorker: 1, identified: false };
  const { args, prefix } = unwrapped;
  const at = (key: string): string => `${prefix}.${key}`;
  const base = ["engine", "workers", input.role];
  const put = (path: readonly string[], value: unknown, option: string): void =>
    draft.set([...base, ...path], value, option);
  const arg = (key: string): Sourced<unknown> | undefined =>
    args[key] === undefined ? undefined : { value: args[key], option: at(key) };

  for (const key of Object.keys(args)) {
    if (!(ENGINE_ARG_KEYS as readonly string[]).includes(key)) {
      issues.unknownKey(at(key), key, ENGINE_ARG_KEYS);
    }
  }
  checkFixed(args, at, issues, input.role);

  const timing = readTiming(args["timing_model"], at("timing_model"), input.role, issues);
  const config = timing.config;
  const fromConfig = (key: string): Sourced<unknown> | undefined =>
    config?.[key] === undefined
      ? undefined
      : { value: config[key], option: `${at("timing_model")}.config.${key}` };

  const model = first(issues, fromConfig("model"), arg("aic_model_path"));
  const system = first(issues, fromConfig("system"), arg("aic_system"));
  const identified = model !== undefined && system !== undefined;

  put(["parallelism", "replicas"], input.replicas.value, input.replicas.option);
  const tensor = first(issues, arg("tensor_parallel_size"), arg("aic_tp_size"), fromConfig("tp"));
  const dp = first(issues, arg("dp_size"), arg("aic_attention_dp_size"), fromConfig("attention_dp"));
  const pipeline = first(issues, arg("pipeline_parallel_size"), arg("aic_pp_size"), fromConfig("pp"));
  const moeTensor = first(issues, arg("aic_moe_tp_size"), fromConfig("moe_tp"));
  const moeExpert = first(issues, arg("aic_moe_ep_size"), fromConfig("moe_ep"));
  for (const [key, found] of [
    ["tensor", tensor],
    ["attention_data", dp],
    ["pipeline", pipeline],
    ["moe_tensor", moeTensor],
    ["moe_expert", moeExpert],
  ] as const) {
    if (found !== undefined) put(["parallelism", key], found.value, found.option);
  }

  const batched = arg("max_num_batched_tokens");
  if (batched !== undefined) put(["scheduler", "max_batched_tokens"], batched.value, batched.option);
  const seqs = arg("max_num_seqs");
  put(
    ["scheduler", "max_sequences"],
    seqs?.value ?? MOCKER_DEFAULT_MAX_NUM_SEQS,
    seqs?.option ?? at("max_num_seqs"),
  );

  const blockSize = arg("block_size");
  if (blockSize !== undefined) put(["kv_cache", "block_size"], blockSize.value, blockSize.option);
  const kvBlock = fromConfig("kv_block_size");
  if (kvBlock !== undefined && kvBlock.value !== (blockSize?.value ?? 64)) {
    issues.add(
      kvBlock.option,
      `(${show(kvBlock.value)}) must equal block_size (${show(blockSize?.value ?? 64)})`,
    );
  }
  const prefixCaching = arg("enable_prefix_caching");
  if (prefixCaching !== undefined)
    put(["kv_cache", "prefix_caching"], prefixCaching.value, prefixCaching.option);
  translateCapacity(arg("num_gpu_blocks"), arg("gpu_memory_utilization"), identified, at, put, issues);

  // No timing model: the AIC identity prices the worker (the AISimulate lowering's default), else polynomial.
  const section = args["timing_model"] === undefined && identified ? { type: "default" } : timing.section;
  put(["timing"], section, at("timing_model"));
  const startup = arg("startup_time");
  if (startup !== undefined && startup.value !== null)
    put(["startup_seconds"], startup.value, startup.option);

  const numeric = (s: Sourced<unknown> | undefined): number => (typeof s?.value === "number" ? s.value : 1);
  return {
    model: asString(model),
    system: asString(system),
    backend: first(issues, arg("backend"), arg("engine_type"), arg("aic_backend"), fromConfig("backend")),
    backendVersion: first(issues, fromConfig("backend_version"), arg("aic_backend_version")),
    maxModelLen: arg("max_model_len"),
    kvBytesPerToken: arg("kv_bytes_per_token"),
    kvTransferBandwidth: arg("kv_transfer_bandwidth"),
    kvTransferTimingMode: arg("kv_transfer_timing_mode"),
    gpusPerWorker: numeric(tensor) * numeric(dp),
    identified,
  };
}

/** Arguments fleetsim accepts only at the value it always simulates. */
function checkFixed(
  args: Mapping,
  at: (key: string) => string,
  issues: OptionIssues,
  role: WorkerRole,
): void {
  const fixed: readonly [string, unknown, string][] = [
    ["enable_chunked_prefill", true, "vLLM v1 always chunks prefill"],
    ["speedup_ratio", 1, "modelled durations are not scaled"],
    ["decode_speedup_ratio", 1, "modelled durations are not scaled"],
    ["preemption_mode", "lifo", "the vLLM v1 scheduler preempts LIFO"],
    ["worker_type", role, `these are the ${role} engine arguments`],
  ];
  for (const [key, value, why] of fixed) {
    if (args[key] !== undefined && args[key] !== value) {
      issues.add(at(key), `${show(args[key])} is not supported by fleetsim (only ${show(value)}: ${why})`);
    }
  }
}

function translateCapacity(
  blocks: Sourced<unknown> | undefined,
  memoryFraction: Sourced<unknown> | undefined,
  identified: boolean,
  at: (key: string) => string,
  put: (path: readonly string[], value: unknown, option: string) => void,
  issues: OptionIssues,
): void {
  if (blocks !== undefined) {
    if (memoryFraction !== undefined) {
      issues.add(
        memoryFraction.option,
        "sizes the KV cache from GPU memory; it conflicts with num_gpu_blocks",
      );
    }
    put(["kv_cache", "capacity"], { type: "fixed", blocks: blocks.value }, blocks.option);
  } else if (identified) {
    put(
      ["kv_cache", "capacity"],
      { type: "default", memory_fraction: memoryFraction?.value ?? 0.9 },
      memoryFraction?.option ?? at("num_gpu_blocks"),
    );
  } else {
    if (memoryFraction !== undefined) {
      issues.add(
        memoryFraction.option,
        "needs the worker's model and GPU (timing_model.config.model/system, or aic_model_path and aic_system)",
      );
    }
    put(["kv_cache", "capacity"], { type: "fixed", blocks: MOCKER_DEFAULT_GPU_BLOCKS }, at("num_gpu_blocks"));
  }
}

interface Timing {
  /** The YAML `timing` section. */
  readonly section: Mapping;
  /** `timing_model.config` of an external model. */
  readonly config?: Mapping;
}

function readTiming(raw: unknown, option: string, role: WorkerRole, issues: OptionIssues): Timing {
  // Without a timing model the caller decides (the AIC identity fields may name a worker).
  if (raw === undefined) return { section: { type: "polynomial" } };
  if (!isMapping(raw)) {
    issues.add(option, `must be a mapping, got ${show(raw)}`);
    return { section: { type: "polynomial" } };
  }
  const type = raw["type"];
  const known = (keys: readonly string[]): void => {
    for (const key of Object.keys(raw)) {
      if (!keys.includes(key)) issues.unknownKey(`${option}.${key}`, key, keys);
    }
  };
  switch (type) {
    case "polynomial":
      known(["type"]);
      return { section: { type: "polynomial" } };
    case "fixed":
      known(["type", "prefill_ms", "decode_ms"]);
      return { section: { type: "fixed", prefill_ms: raw["prefill_ms"], decode_ms: raw["decode_ms"] } };
    case "external": {
      known(["type", "provider", "config"]);
      if (raw["provider"] !== "ais" && raw["provider"] !== "aic") {
        issues.add(`${option}.provider`, `Input should be 'ais' or 'aic', got ${show(raw["provider"])}`);
      }
      const config = raw["config"];
      if (!isMapping(config)) {
        issues.add(`${option}.config`, "an external timing model needs config: {model, system, ...}");
        return { section: { type: "default" } };
      }
      for (const key of Object.keys(config)) {
        if (!(EXTERNAL_CONFIG_KEYS as readonly string[]).includes(key)) {
          issues.unknownKey(`${option}.config.${key}`, key, EXTERNAL_CONFIG_KEYS);
        }
      }
      for (const key of ["model", "system"]) {
        if (typeof config[key] !== "string" || config[key] === "") {
          issues.add(
            `${option}.config.${key}`,
            `Field required (a non-empty string), got ${show(config[key])}`,
          );
        }
      }
      if (config["worker_type"] !== undefined && config["worker_type"] !== role) {
        issues.add(
          `${option}.config.worker_type`,
          `${show(config["worker_type"])} does not match: these are the ${role} engine arguments`,
        );
      }
      return { section: { type: "default" }, config };
    }
    default:
      issues.add(`${option}.type`, `Input should be 'external', 'polynomial' or 'fixed', got ${show(type)}`);
      return { section: { type: "polynomial" } };
  }
}

/** The first defined value; every other defined one must be equal (two names for one thing). */
function first(
  issues: OptionIssues,
  ...candidates: (Sourced<unknown> | undefined)[]
): Sourced<unknown> | undefined {
  const defined = candidates.filter((c): c is Sourced<unknown> => c !== undefined);
  for (const other of defined.slice(1)) {
    if (other.value !== defined[0].value) {
      issues.add(
        other.option,
        `(${show(other.value)}) contradicts ${defined[0].option} (${show(defined[0].value)})`,
      );
    }
  }
  return defined[0];
}

function asString(found: Sourced<unknown> | undefined): Sourced<string> | undefined {
  return typeof found?.value === "string" ? { value: found.value, option: found.option } : undefined;
}

/** A fact both roles state must agree; the first role's wins. */
function agreed<K extends Exclude<keyof RoleFacts, "gpusPerWorker" | "identified">>(
  facts: readonly RoleFacts[],
  key: K,
  issues: OptionIssues,
): RoleFacts[K] {
  const found = facts.map((f) => f[key]).filter((v) => v !== undefined);
  if (found.length === 0) return undefined;
  for (const other of found.slice(1)) {
    if (other!.value !== found[0]!.value) {
      issues.add(
        other!.option,
        `(${show(other!.value)}) must equal ${found[0]!.option} (${show(found[0]!.value)}): both roles share it`,
      );
    }
  }
  return found[0];
}

/** `engine.hardware`: the first role's GPU; a P/D role on another GPU gets its own `hardware`. */
function agreedSystem(
  roles: readonly RoleInput[],
  facts: readonly RoleFacts[],
  draft: ConfigDraft,
): Sourced<string> | undefined {
  const engineSystem = facts.find((f) => f.system !== undefined)?.system;
  if (roles.length > 1) {
    roles.forEach((r, i) => {
      const own = facts[i].system;
      if (own !== undefined && engineSystem !== undefined && own.value !== engineSystem.value) {
        draft.set(["engine", "workers", r.role, "hardware"], own.value, own.option);
      }
    });
  }
  return engineSystem;
}
