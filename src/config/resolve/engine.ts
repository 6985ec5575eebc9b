/**
 * Validated `engine` → EngineSpec: each role's timing provider and KV capacity (which may need
 * the model architecture and the GPU), the shared context length, and for disaggregated mode
 * the KV hand-off. Refusals of valid config that fleetsim cannot price live here too.
 */

import { resolve as resolvePath } from "node:path";
import type { SpeculationSpec } from "../../engine/speculation.js";
import { gpuSpec } from "../../hardware/catalog.js";
import { HardwareError } from "../../hardware/errors.js";
import type { GpuSpec } from "../../hardware/gpu.js";
import type { ModelArchitecture } from "../../model/architecture.js";
import { ModelError } from "../../model/errors.js";
import { defaultKvCapacityBlocks, type KvCapacityBreakdown, kvBytesPerToken } from "../../model/memory.js";
import { resolveModel } from "../../model/resolve.js";
import { configuredMoeParallelism, resolveMoeParallelism } from "../../model/weights.js";
import { isDirectory } from "../../util/fsRead.js";
import type { WorkerRole } from "../../util/workerRole.js";
import { defaultAsyncScheduling } from "../asyncScheduling.js";
import { BACKEND_DEFAULTS, type Backend, roleBlockSize, roleMemoryFraction } from "../backends.js";
import { type ContextLengthLookup, lookupMaxContextLength } from "../contextLength.js";
import { dotted, type PathSegment } from "../issues.js";
import type {
  DiskOffloadSpec,
  EngineSpec,
  HostOffloadSpec,
  KvTransferSpec,
  TimingSpec,
  WorkerRoleSpec,
} from "../runSpec.js";
import type { DisaggregatedEngineConfig, EngineConfig, RoleConfig } from "../schema/engine.js";
import { SGLANG_DEFAULTS } from "../schema/role.js";
import { DEFAULT_SPECULATION_SEED, nextnAcceptanceRates } from "../schema/speculation.js";

/** Records one issue at a config path (the message already names what is wrong). */
export type Report = (path: readonly PathSegment[], message: string) => void;

type Path = readonly PathSegment[];

const rolePath = (role: WorkerRole): Path => ["engine", "workers", role];

export function resolveEngine(
  engine: EngineConfig,
  configDir: string,
  contextLength: ContextLengthLookup,
  report: Report,
): EngineSpec | undefined {
  const deployment = new DeploymentFacts(engine.model, report);
  const perfDatabase =
    engine.perf_database === undefined ? null : resolvePath(configDir, engine.perf_database);
  const expertSlots = resolveExpertSlots(engine, deployment, report);
  if (expertSlots === undefined) return undefined;
  const roleContext: RoleContext = {
    engineHardware: engine.hardware,
    expertSlots,
    backend: engine.backend,
    deployment,
    perfDatabase,
    balancedMoe: engine.enable_eplb,
    chunkedPrefill: engine.enable_chunked_prefill,
    asyncScheduling: defaultAsyncScheduling(engine.backend, engine.backend_version),
    report,
  };
  const common = { model: engine.model, hardware: engine.hardware, backend: engine.backend };
  // Only a speculating run's roles carry the key: specs of other runs stay as they were.
  const spec = speculationOf(engine);
  const speculation = spec === null ? {} : { speculation: spec };

  if (engine.mode === "aggregated") {
    const aggregated = resolveRole(engine.workers.aggregated, rolePath("aggregated"), roleContext);
    // After the roles: an unknown model they already reported is not reported again here.
    const maxModelLen = resolveContextLength(engine, contextLength, deployment, report);
    if (aggregated === undefined || maxModelLen === undefined) return undefined;
    return { mode: "aggregated", ...common, aggregated: { ...aggregated, maxModelLen, ...speculation } };
  }

  const prefill = resolveRole(engine.workers.prefill, rolePath("prefill"), roleContext);
  const decode = resolveRole(engine.workers.decode, rolePath("decode"), roleContext);
  const kvTransfer = resolveKvTransfer(engine, deployment, report);
  const maxModelLen = resolveContextLength(engine, contextLength, deployment, report);
  if (
    prefill === undefined ||
    decode === undefined ||
    kvTransfer === undefined ||
    maxModelLen === undefined
  ) {
    return undefined;
  }
  return {
    mode: "disaggregated",
    ...common,
    prefill: { ...prefill, maxModelLen, ...speculation },
    decode: { ...decode, maxModelLen, ...speculation },
    kvTransfer,
  };
}

/**
 * `engine.speculation`, or `engine.nextn` lowered to MTP speculation (the schema refuses both
 * at once), as every role's engines read it (docs/speculation.md); null = off.
 */
function speculationOf(engine: EngineConfig): SpeculationSpec | null {
  if (engine.nextn > 0) {
    return {
      kind: "mtp",
      numSpeculativeTokens: engine.nextn,
      acceptanceRates: nextnAcceptanceRates(engine.nextn, engine.nextn_accepted ?? 0),
      // The reference's engine-level keys carry no seed: its replay's default (`aic_mtp_seed`).
      seed: DEFAULT_SPECULATION_SEED,
    };
  }
  const s = engine.speculation;
  if (s === undefined || s === null) return null;
  return {
    kind: s.kind,
    numSpeculativeTokens: s.num_speculative_tokens,
    acceptanceRates: s.acceptance_rates,
    seed: s.seed,
  };
}

/** Where a model-resolution failure is reported, and what the message is prefixed with. */
interface ModelNeed {
  readonly path: Path;
  readonly prefix: string;
}

const ENGINE_MODEL: ModelNeed = { path: ["engine", "model"], prefix: "" };

/**
 * The model architecture and GPU systems, resolved only when something needs them (default
 * timing, default capacity, `auto` KV-transfer size), so that polynomial/fixed runs with fixed
 * capacity work for any model id, as in the reference. Each failure is reported once: the model
 * at its first need (normally `engine.model`), a GPU at the key that named it.
 */
class DeploymentFacts {
  private modelValue: ModelArchitecture | null | undefined;
  private readonly gpus = new Map<string, GpuSpec | null>();

  constructor(
    private readonly modelId: string,
    private readonly report: Report,
  ) {}

  /** Whether resolving the model was needed and failed (already reported). */
  get modelFailed(): boolean {
    return this.modelValue === null;
  }

  model(need: ModelNeed = ENGINE_MODEL): ModelArchitecture | null {
    if (this.modelValue !== undefined) return this.modelValue;
    let value: ModelArchitecture | null = null;
    try {
      value = resolveModel(this.modelId);
    } catch (err) {
      if (!(err instanceof ModelError)) throw err;
      this.report(need.path, `${need.prefix}${err.message}`);
    }
    this.modelValue = value;
    return value;
  }

  /** The model if it resolves, without reporting anything when it does not (optional checks). */
  knownModel(): ModelArchitecture | null {
    if (this.modelValue !== undefined) return this.modelValue;
    try {
      return resolveModel(this.modelId);
    } catch (err) {
      if (!(err instanceof ModelError)) throw err;
      return null;
    }
  }

  /** The GPU system `id`, named at `path` (`engine.hardware` or a P/D role's `hardware`). */
  gpu(id: string, path: Path): GpuSpec | null {
    const key = dotted(path);
    const known = this.gpus.get(key);
    if (known !== undefined) return known;
    let value: GpuSpec | null = null;
    try {
      value = gpuSpec(id);
    } catch (err) {
      if (!(err instanceof HardwareError)) throw err;
      this.report(path, err.message);
    }
    this.gpus.set(key, value);
    return value;
  }
}

interface RoleContext {
  readonly engineHardware: string;
  readonly backend: Backend;
  readonly deployment: DeploymentFacts;
  readonly perfDatabase: string | null;
  /** `engine.wideep_num_slots`, checked against the model; null = one slot per expert. */
  readonly expertSlots: number | null;
  /** `engine.enable_eplb`: MoE priced on the balanced-load tables. */
  readonly balancedMoe: boolean;
  /** `engine.enable_chunked_prefill`. */
  readonly chunkedPrefill: boolean;
  /** A role's `scheduler.async_scheduling` when it does not set it: the backend version's default. */
  readonly asyncScheduling: boolean;
  readonly report: Report;
}

/** A role's GPU: its own `hardware` (P/D roles may override) or the engine's. */
function roleGpu(role: RoleConfig, path: Path, ctx: RoleContext): GpuSpec | null {
  return role.hardware === undefined
    ? ctx.deployment.gpu(ctx.engineHardware, ["engine", "hardware"])
    : ctx.deployment.gpu(role.hardware, [...path, "hardware"]);
}

function resolveRole(
  role: RoleConfig,
  path: Path,
  ctx: RoleContext,
): Omit<WorkerRoleSpec, "maxModelLen"> | undefined {
  // Before the capacity, which sizes the slots' weights.
  if (!expertSlotsFitRole(role, path, ctx)) return undefined;
  const timing = resolveTiming(role, path, ctx);
  const capacity = resolveCapacity(role, path, ctx);
  const hostOffload = resolveHostOffload(role, path, ctx);
  if (!parallelismFitsModel(role, path, ctx)) return undefined;
  if (timing === undefined || capacity === undefined || hostOffload === undefined) return undefined;
  const p = role.parallelism;
  const moe = moeSharding(p, ctx);
  const blockSize = roleBlockSize(role, ctx.backend);
  return {
    replicas: p.replicas,
    tensor: p.tensor,
    pipeline: p.pipeline,
    attentionData: p.attention_data,
    moeTensor: moe.moeTensor,
    moeExpert: moe.moeExpert,
    // As the seed defines it (tensor × attention_data) and the reference counts it (`_engine_caps`):
    // pipeline stages are priced by the op-level model but add no GPUs to budgets or gpu_hours.
    gpusPerWorker: p.tensor * p.attention_data,
    maxBatchedTokens: role.scheduler.max_batched_tokens,
    maxSequences: role.scheduler.max_sequences,
    asyncScheduling: role.scheduler.async_scheduling ?? ctx.asyncScheduling,
    ...(role.timing.first_token === "prefill" ? { firstTokenAtPrefill: true as const } : {}),
    chunkedPrefill: ctx.chunkedPrefill,
    prefillScheduleInterval: role.scheduler.prefill_schedule_interval,
    // Only when set: specs of other runs stay as they were.
    ...(role.scheduler.prefill_decode_interval > 0
      ? { prefillDecodeInterval: role.scheduler.prefill_decode_interval }
      : {}),
    blockSize,
    prefixCaching: role.kv_cache.prefix_caching,
    numGpuBlocks: capacity.blocks,
    ...(capacity.estimate === null ? {} : { kvCapacityEstimate: capacity.estimate }),
    timing,
    startupSeconds: role.startup_seconds,
    hardware: role.hardware ?? ctx.engineHardware,
    hostOffload,
    ...backendFields(role, ctx.backend),
  };
}

/** The backend's own role settings; nothing for vLLM, whose role specs stay as they were. */
function backendFields(
  role: RoleConfig,
  backend: Backend,
): Pick<WorkerRoleSpec, "backend" | "capacityPolicy" | "sglang"> {
  if (backend === "vllm") return {};
  if (backend === "trtllm") {
    const policy = role.scheduler.capacity_scheduler_policy ?? "GUARANTEED_NO_EVICT";
    return {
      backend,
      capacityPolicy: policy === "MAX_UTILIZATION" ? "max_utilization" : "guaranteed_no_evict",
    };
  }
  const sg = role.sglang;
  // Under attention DP the default chunk is 8192 / DP ranks (in whole pages) and the output
  // reservation 0.3 × conservativeness instead of 0.7 (`ai-dynamo/aisimulate@6e591c7:python/aisimulate/src/aisimulate/config/engine.py`, `ai-dynamo/aisimulate@03e8867:crates/core/src/engine/scheduler/vllm/core.rs`).
  const dp = role.parallelism.attention_data;
  const page = roleBlockSize(role, backend);
  const dpChunk = Math.max(page, Math.floor(SGLANG_DEFAULTS.chunkedPrefillSize / dp / page) * page);
  return {
    backend,
    sglang: {
      schedulePolicy: sg?.schedule_policy ?? "fifo",
      maxPrefillTokens: sg?.max_prefill_tokens ?? SGLANG_DEFAULTS.maxPrefillTokens,
      chunkedPrefillSize: sg?.chunked_prefill_size ?? dpChunk,
      clipMaxNewTokens: sg?.clip_max_new_tokens ?? SGLANG_DEFAULTS.clipMaxNewTokens,
      scheduleConservativeness: sg?.schedule_conservativeness ?? SGLANG_DEFAULTS.scheduleConservativeness,
      newTokenRatioFactor: dp > 1 ? 0.3 : 0.7,
      enableMixedChunk: sg?.enable_mixed_chunk ?? false,
    },
  };
}

/**
 * `kv_cache.host_offload` (docs/offload.md): the tier's block size on one GPU comes from
 * `kv_cache.bytes_per_token` (or, `auto`, the model's KV bytes per token at the role's TP/PP).
 * A decode role never admits from its own queue (its prompt KV arrives by transfer), so a host
 * tier there would change nothing: refused. Returns undefined after reporting a problem.
 */
function resolveHostOffload(
  role: RoleConfig,
  path: Path,
  ctx: RoleContext,
): HostOffloadSpec | null | undefined {
  const h = role.kv_cache.host_offload;
  if (h === null) return null;
  const at: Path = [...path, "kv_cache", "host_offload"];
  if (path[path.length - 1] === "decode") {
    ctx.report(
      at,
      `${dotted(at)} is not supported on a decode role by fleetsim (its prompt KV arrives by transfer); set it on the prefill role`,
    );
    return undefined;
  }
  let bytesPerToken = role.kv_cache.bytes_per_token;
  if (bytesPerToken === "auto") {
    const model = ctx.deployment.model({
      path: at,
      prefix: `${dotted(at)} sizes host blocks from the model's KV bytes per token; set ${dotted([...path, "kv_cache", "bytes_per_token"])} instead, or fix the model: `,
    });
    if (model === null) return undefined;
    const p = role.parallelism;
    try {
      bytesPerToken = kvBytesPerToken(model, { tensor: p.tensor, pipeline: p.pipeline });
    } catch (err) {
      if (!(err instanceof ModelError)) throw err;
      ctx.report(at, err.message);
      return undefined;
    }
  }
  return {
    numHostBlocks: h.num_host_blocks,
    scope: h.scope,
    d2hBandwidthGBps: h.d2h_bandwidth_gbps,
    h2dBandwidthGBps: h.h2d_bandwidth_gbps,
    latencyToFirstByteMs: h.latency_to_first_byte_ms,
    sharedD2hBandwidthGBps: h.shared_d2h_bandwidth_gbps,
    sharedH2dBandwidthGBps: h.shared_h2d_bandwidth_gbps,
    bytesPerBlock: bytesPerToken * roleBlockSize(role, ctx.backend),
    routerSeesHost: h.router_sees_host,
    disk: diskTierOf(role.kv_cache.g3_offload),
  };
}

function diskTierOf(g: RoleConfig["kv_cache"]["g3_offload"]): DiskOffloadSpec | null {
  if (g === null) return null;
  const shared = g.scope === "cluster_shared";
  return {
    numBlocks: g.num_g3_blocks,
    scope: g.scope,
    latencyToFirstByteMs: g.latency_to_first_byte_ms,
    readBandwidthGBps: g.read_bandwidth_gbps,
    writeBandwidthGBps: g.write_bandwidth_gbps,
    sharedReadBandwidthGBps: shared ? g.shared_read_bandwidth_gbps : null,
    sharedWriteBandwidthGBps: shared ? g.shared_write_bandwidth_gbps : null,
  };
}

/** The role's expert sharding: defaults follow vLLM and the reference (`configuredMoeParallelism`). */
function moeSharding(
  p: RoleConfig["parallelism"],
  ctx: RoleContext,
): { moeTensor: number; moeExpert: number } {
  const arch = ctx.deployment.knownModel();
  const given = { moeTensor: p.moe_tensor, moeExpert: p.moe_expert };
  if (arch === null || arch.moe === null) return given;
  try {
    return configuredMoeParallelism(arch, {
      tensor: p.tensor,
      pipeline: p.pipeline,
      attentionData: p.attention_data,
      ...given,
    });
  } catch {
    return given; // an impossible layout is reported where the model is priced
  }
}

const SLOTS_PATH: Path = ["engine", "wideep_num_slots"];

/**
 * `engine.wideep_num_slots` against the model, with the reference's rules (AIConfigurator's
 * `validate_trtllm_large_ep` and aisimulate's "slots require an MoE model"): a MoE model, at least
 * one slot per expert, and more only with EPLB, whose copies of hot experts the redundant slots
 * hold. Undefined after a reported error. The schema already required default timing, so the
 * model is resolved (a model that does not resolve is reported by its first need).
 */
function resolveExpertSlots(
  engine: EngineConfig,
  deployment: DeploymentFacts,
  report: Report,
): number | null | undefined {
  const slots = engine.wideep_num_slots;
  if (slots === null) return null;
  const model = deployment.knownModel();
  if (model === null) return slots;
  const at = `engine.wideep_num_slots (${slots})`;
  if (model.moe === null) {
    report(
      SLOTS_PATH,
      `engine.wideep_num_slots requires an MoE model (as in the reference); ${model.id} is dense`,
    );
    return undefined;
  }
  const experts = model.moe.numExperts;
  if (slots < experts) {
    report(SLOTS_PATH, `${at} must be at least ${model.id}'s ${experts} experts: every expert needs a slot`);
    return undefined;
  }
  if (slots > experts && !engine.enable_eplb) {
    report(
      SLOTS_PATH,
      `${at} above ${model.id}'s ${experts} experts needs engine.enable_eplb: true ` +
        "(the redundant slots hold EPLB's copies of hot experts; the reference requires it too)",
    );
    return undefined;
  }
  return slots;
}

/** Each EP rank of a role holds the same number of expert slots (TRT-LLM's and vLLM's rule). */
function expertSlotsFitRole(role: RoleConfig, path: Path, ctx: RoleContext): boolean {
  const slots = ctx.expertSlots;
  const arch = ctx.deployment.knownModel();
  if (slots === null || arch === null || arch.moe === null) return true;
  const p = role.parallelism;
  let moeExpert: number;
  try {
    ({ moeExpert } = resolveMoeParallelism(arch, {
      tensor: p.tensor,
      pipeline: p.pipeline,
      attentionData: p.attention_data,
      ...moeSharding(p, ctx),
    }));
  } catch {
    return true; // an impossible layout is reported where the model is priced
  }
  if (slots % moeExpert === 0) return true;
  ctx.report(
    SLOTS_PATH,
    `engine.wideep_num_slots (${slots}) must split evenly over the ${moeExpert} expert-parallel ranks of ${dotted(path)} ` +
      `(parallelism.moe_expert), so that every rank holds the same number of slots`,
  );
  return false;
}

/**
 * Parallelism the model can take, when the model is known (a model id that does not resolve is
 * accepted with polynomial/fixed timing, so it is not checked here): each pipeline stage needs at
 * least one layer and each tensor rank at least one attention head. Reported at the key.
 */
function parallelismFitsModel(role: RoleConfig, path: Path, ctx: RoleContext): boolean {
  const arch = ctx.deployment.knownModel();
  if (arch === null) return true;
  const p = role.parallelism;
  let ok = true;
  if (p.pipeline > arch.numLayers) {
    ctx.report(
      [...path, "parallelism", "pipeline"],
      `${p.pipeline} pipeline stages for a model of ${arch.numLayers} layers`,
    );
    ok = false;
  }
  if (p.tensor > arch.numHeads) {
    ctx.report(
      [...path, "parallelism", "tensor"],
      `${p.tensor} tensor ranks for a model of ${arch.numHeads} attention heads`,
    );
    ok = false;
  }
  return ok;
}

function resolveTiming(role: RoleConfig, path: Path, ctx: RoleContext): TimingSpec | undefined {
  const t = role.timing;
  switch (t.type) {
    case "polynomial":
      return { type: "polynomial" };
    case "fixed":
      return { type: "fixed", prefillMs: t.prefill_ms, decodeMs: t.decode_ms };
    case "default": {
      if (t.forward_model === "fpm" || t.fpm_parquet_path !== undefined) {
        ctx.report(
          [...path, "timing", t.forward_model === "fpm" ? "forward_model" : "fpm_parquet_path"],
          `${dotted(path)}.timing: the whole-forward FPM model is not supported by fleetsim yet; ` +
            "use forward_model: op_level (the default)",
        );
        return undefined;
      }
      const model = ctx.deployment.model();
      const gpu = roleGpu(role, path, ctx);
      if (model === null || gpu === null) return undefined;
      const { perfDatabase } = ctx;
      if (perfDatabase !== null && !isDirectory(perfDatabase)) {
        ctx.report(["engine", "perf_database"], `perf database directory not found: ${perfDatabase}`);
        return undefined;
      }
      if (t.cuda_graph_padding === true && ctx.backend !== "vllm") {
        ctx.report(
          [...path, "timing", "cuda_graph_padding"],
          `${dotted(path)}.timing.cuda_graph_padding models vLLM's CUDA-graph capture sizes; ` +
            `a ${ctx.backend} role does not take it`,
        );
        return undefined;
      }
      const hostOverhead = {
        perPassMs: t.host_overhead?.per_pass_ms ?? null,
        perSequenceMs: t.host_overhead?.per_sequence_ms ?? null,
      };
      return {
        type: "default",
        model,
        gpu,
        perfDatabase,
        hostOverhead,
        balancedMoe: ctx.balancedMoe,
        ...(t.op_tables === "backend" ? { opTables: "backend" as const } : {}),
        ...(t.mixed_passes === "additive" ? { mixedPasses: "additive" as const } : {}),
        ...(t.context_attention_extrapolation === "quadratic"
          ? { contextExtrapolation: "quadratic" as const }
          : {}),
        ...(t.cuda_graph_padding === false ? { cudaGraphPadding: false as const } : {}),
      };
    }
  }
}

/** KV blocks per rank, with the memory estimate they come from (null: configured). */
function resolveCapacity(
  role: RoleConfig,
  path: Path,
  ctx: RoleContext,
): { readonly blocks: number; readonly estimate: KvCapacityBreakdown | null } | undefined {
  const kv = role.kv_cache;
  const capacity = kv.capacity;
  if (capacity.type === "default") {
    const model = ctx.deployment.model();
    const gpu = roleGpu(role, path, ctx);
    if (model === null || gpu === null) return undefined;
    const p = role.parallelism;
    try {
      const estimate = defaultKvCapacityBlocks({
        model,
        gpu,
        tensor: p.tensor,
        pipeline: p.pipeline,
        // The experts are sharded over tensor × attention_data (wide EP): each rank holds only its
        // share of them, as the timing model prices them.
        attentionData: p.attention_data,
        ...moeSharding(p, ctx),
        ...(ctx.expertSlots === null ? {} : { expertSlots: ctx.expertSlots }),
        blockSize: roleBlockSize(role, ctx.backend),
        memoryFraction: roleMemoryFraction(capacity.memory_fraction, ctx.backend),
        memoryRule: BACKEND_DEFAULTS[ctx.backend].memoryRule,
        maxNumTokens: role.scheduler.max_batched_tokens,
        cudaGraphReservedBytes: capacity.cuda_graph_reserved_bytes ?? 0,
      });
      return { blocks: estimate.blocks, estimate: estimate.breakdown };
    } catch (err) {
      if (!(err instanceof ModelError)) throw err;
      ctx.report([...path, "kv_cache", "capacity"], err.message);
      return undefined;
    }
  }
  if (capacity.blocks !== undefined) return { blocks: capacity.blocks, estimate: null };
  // Schema guarantees bytes with an explicit block size and a numeric bytes_per_token here.
  const bytesPerToken = kv.bytes_per_token as number;
  const blockSize = roleBlockSize(role, ctx.backend);
  const blocks = Math.floor(capacity.bytes! / (blockSize * bytesPerToken));
  if (blocks < 1) {
    ctx.report(
      [...path, "kv_cache", "capacity", "bytes"],
      `${dotted(path)}.kv_cache.capacity.bytes=${capacity.bytes} holds no full KV block ` +
        `(block_size ${blockSize} x bytes_per_token ${bytesPerToken} bytes)`,
    );
    return undefined;
  }
  return { blocks, estimate: null };
}

const BYTES_PER_TOKEN: Path = ["engine", "kv_transfer", "bytes_per_token"];

/**
 * `auto` bytes per token = the model's KV bytes per token on one GPU of the prefill role (its
 * tensor/pipeline split): the sender's shard is what crosses the link (`ai-dynamo/aisimulate@26191a9:docs/replay/engine/kv-transfer.md`).
 */
function resolveKvTransfer(
  engine: DisaggregatedEngineConfig,
  deployment: DeploymentFacts,
  report: Report,
): KvTransferSpec | undefined {
  const kv = engine.kv_transfer;
  let bytesPerToken = kv.bytes_per_token;
  if (bytesPerToken === "auto") {
    const model = deployment.model({
      path: BYTES_PER_TOKEN,
      prefix: `${dotted(BYTES_PER_TOKEN)}='auto' derives the size from the model; set a number of bytes instead, or fix the model: `,
    });
    if (model === null) return undefined;
    const p = engine.workers.prefill.parallelism;
    try {
      bytesPerToken = kvBytesPerToken(model, { tensor: p.tensor, pipeline: p.pipeline });
    } catch (err) {
      if (!(err instanceof ModelError)) throw err;
      report(BYTES_PER_TOKEN, err.message);
      return undefined;
    }
  }
  return { bytesPerToken, bandwidthGBps: kv.bandwidth_gb_per_second, timingMode: kv.timing_mode };
}

function resolveContextLength(
  engine: EngineConfig,
  lookup: ContextLengthLookup,
  deployment: DeploymentFacts,
  report: Report,
): number | null | undefined {
  if (engine.context_length !== "max") return engine.context_length;
  // SGLang and TRT-LLM with `max`: no limit (`ai-dynamo/aisimulate@acb5b46:python/aisimulate/src/aisimulate/aic.py`).
  if (engine.backend !== "vllm") return null;
  const found = lookupMaxContextLength(engine.model, lookup);
  if (found === undefined) {
    // An unknown model was already reported once; say it only once.
    if (deployment.modelFailed) return undefined;
    report(
      ["engine", "context_length"],
      `cannot resolve context_length 'max' for model '${engine.model}' offline: no config.json in a local ` +
        "model directory or the Hugging Face cache, and the model is not in fleetsim's built-in catalog. " +
        "Set engine.context_length to an integer",
    );
    return undefined;
  }
  return found.value;
}
