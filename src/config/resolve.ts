/**
 * Validated config → RunSpec. Here live the steps that need more than the document: the file
 * system (trace paths, `context_length: max`), derived numbers (`requests_per_load_unit`, KV
 * bytes → blocks), and refusals of valid config that fleetsim cannot simulate yet.
 */
import { statSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import { gpuSpec } from "../hardware/catalog.js";
import { HardwareError } from "../hardware/errors.js";
import type { GpuSpec } from "../hardware/gpu.js";
import type { ModelArchitecture } from "../model/architecture.js";
import { ModelError } from "../model/errors.js";
import { defaultKvCapacityBlocks } from "../model/memory.js";
import { resolveModel } from "../model/resolve.js";
import { type ContextLengthLookup, lookupMaxContextLength } from "./contextLength.js";
import type { PathIssue, PathSegment } from "./issues.js";
import type {
  EngineSpec,
  LoadSpec,
  RunSpec,
  SlaSpec,
  SourceSpec,
  Stack,
  StopSpec,
  TimingSpec,
  WorkerRoleSpec,
} from "./runSpec.js";
import type { PredictConfigOutput } from "./schema.js";
import type { EngineConfig, RoleConfig } from "./schemaEngine.js";
import type { LoadConfig, TrafficConfig } from "./schemaTraffic.js";

export interface ResolveContext {
  readonly stack: Stack;
  /** Directory of the config file: relative trace paths are resolved against it. */
  readonly configDir: string;
  readonly contextLength: ContextLengthLookup;
}

export type ResolveResult =
  | { readonly ok: true; readonly spec: RunSpec }
  | { readonly ok: false; readonly issues: PathIssue[] };

const ROLE_PATH = ["engine", "workers", "aggregated"] as const;
const ROLE = ROLE_PATH.join(".");

export function resolveRunSpec(config: PredictConfigOutput, ctx: ResolveContext): ResolveResult {
  const issues: PathIssue[] = [];
  const report = (path: readonly PathSegment[], message: string): void => {
    issues.push({ path, message, at: "value" });
  };

  const source = resolveSource(config.traffic, ctx.configDir, report);
  const load = resolveLoad(config.traffic.load);
  const stop = resolveStop(config.traffic);
  const deployment = new DeploymentFacts(config.engine, report);
  const perfDatabase =
    config.engine.perf_database === undefined
      ? null
      : resolvePath(ctx.configDir, config.engine.perf_database);
  const aggregated = resolveRole(config.engine.workers.aggregated, deployment, perfDatabase, report);
  const maxModelLen = resolveContextLength(config.engine, ctx.contextLength, deployment, report);

  if (issues.length > 0 || source === undefined || aggregated === undefined || maxModelLen === undefined) {
    return { ok: false, issues };
  }
  const engine: EngineSpec = {
    mode: config.engine.mode,
    model: config.engine.model,
    hardware: config.engine.hardware,
    backend: config.engine.backend,
    aggregated: { ...aggregated, maxModelLen },
  };
  return {
    ok: true,
    spec: {
      stack: ctx.stack,
      source,
      load,
      stop,
      engine,
      router: { policy: config.router.policy },
      sla: resolveSla(config),
    },
  };
}

type Report = (path: readonly PathSegment[], message: string) => void;

/**
 * The model architecture and GPU system, resolved only when something needs them (default
 * timing or default capacity), so that polynomial/fixed runs with fixed capacity work for any
 * model id, as in the reference. A failure is reported once, at `engine.model` / `engine.hardware`.
 */
class DeploymentFacts {
  private modelValue: ModelArchitecture | null | undefined;

  /** Whether resolving the model was needed and failed (already reported at `engine.model`). */
  get modelFailed(): boolean {
    return this.modelValue === null;
  }
  private gpuValue: GpuSpec | null | undefined;

  constructor(
    private readonly engine: EngineConfig,
    private readonly report: Report,
  ) {}

  model(): ModelArchitecture | null {
    if (this.modelValue !== undefined) return this.modelValue;
    let value: ModelArchitecture | null = null;
    try {
      value = resolveModel(this.engine.model);
    } catch (err) {
      if (!(err instanceof ModelError)) throw err;
      this.report(["engine", "model"], err.message);
    }
    this.modelValue = value;
    return value;
  }

  gpu(): GpuSpec | null {
    if (this.gpuValue !== undefined) return this.gpuValue;
    let value: GpuSpec | null = null;
    try {
      value = gpuSpec(this.engine.hardware);
    } catch (err) {
      if (!(err instanceof HardwareError)) throw err;
      this.report(["engine", "hardware"], err.message);
    }
    this.gpuValue = value;
    return value;
  }
}

function resolveSource(traffic: TrafficConfig, configDir: string, report: Report): SourceSpec | undefined {
  const src = traffic.source;
  if (src.type === "synthetic") {
    return { type: "synthetic", inputTokens: src.input_tokens, outputTokens: src.output_tokens };
  }
  const path = resolvePath(configDir, src.path);
  // Checked here rather than when the trace is read so the error can point at the config line.
  if (!isFile(path)) {
    report(["traffic", "source", "paths", 0], `trace file not found: ${path}`);
    return undefined;
  }
  return { type: "trace", format: src.format, path, blockSize: src.block_size };
}

function resolveLoad(load: LoadConfig): LoadSpec {
  switch (load.type) {
    case "concurrency":
      return { type: "concurrency", concurrency: load.concurrency };
    case "poisson":
      return { type: "poisson", requestsPerSecond: load.requests_per_second, seed: load.seed };
    case "constant_rate":
      return { type: "constant_rate", requestsPerSecond: load.requests_per_second };
    case "trace_timestamps":
      return { type: "trace_timestamps", speedup: load.speedup };
  }
}

function resolveStop(traffic: TrafficConfig): StopSpec {
  const { stop, load } = traffic;
  if (traffic.source.type === "trace") {
    const seconds = stop?.max_virtual_time_seconds;
    return { requests: null, maxVirtualTimeMs: seconds === undefined ? null : seconds * 1000 };
  }
  if (stop?.requests !== undefined) return { requests: stop.requests, maxVirtualTimeMs: null };
  // Schema guarantees exactly one count stop for synthetic traffic.
  const perUnit = stop!.requests_per_load_unit!;
  const unit =
    load.type === "concurrency"
      ? load.concurrency
      : load.type === "trace_timestamps"
        ? 1
        : load.requests_per_second;
  return { requests: Math.max(1, roundHalfEven(perUnit * unit)), maxVirtualTimeMs: null };
}

/** Python's `round()` (ties to even), which the reference uses for `requests_per_load_unit`. */
export function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor; // exact: x and floor(x) are within a factor of two (or floor is 0)
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

function resolveRole(
  role: RoleConfig,
  deployment: DeploymentFacts,
  perfDatabase: string | null,
  report: Report,
): Omit<WorkerRoleSpec, "maxModelLen"> | undefined {
  const timing = resolveTiming(role, deployment, perfDatabase, report);
  const numGpuBlocks = resolveCapacity(role, deployment, report);
  if (timing === undefined || numGpuBlocks === undefined) return undefined;
  const p = role.parallelism;
  return {
    replicas: p.replicas,
    tensor: p.tensor,
    pipeline: p.pipeline,
    attentionData: p.attention_data,
    moeTensor: p.moe_tensor,
    moeExpert: p.moe_expert,
    gpusPerWorker: p.tensor * p.pipeline * p.attention_data * (p.prefill_context ?? 1),
    maxBatchedTokens: role.scheduler.max_batched_tokens,
    maxSequences: role.scheduler.max_sequences,
    blockSize: role.kv_cache.block_size,
    prefixCaching: role.kv_cache.prefix_caching,
    numGpuBlocks,
    timing,
    startupSeconds: role.startup_seconds,
  };
}

function resolveTiming(
  role: RoleConfig,
  deployment: DeploymentFacts,
  perfDatabase: string | null,
  report: Report,
): TimingSpec | undefined {
  const t = role.timing;
  switch (t.type) {
    case "polynomial":
      return { type: "polynomial" };
    case "fixed":
      return { type: "fixed", prefillMs: t.prefill_ms, decodeMs: t.decode_ms };
    case "default": {
      if (t.forward_model === "fpm" || t.fpm_parquet_path !== undefined) {
        report(
          [...ROLE_PATH, "timing", t.forward_model === "fpm" ? "forward_model" : "fpm_parquet_path"],
          `${ROLE}.timing: the whole-forward FPM model is not supported by fleetsim yet; ` +
            "use forward_model: op_level (the default)",
        );
        return undefined;
      }
      const model = deployment.model();
      const gpu = deployment.gpu();
      if (model === null || gpu === null) return undefined;
      if (perfDatabase !== null && !isDirectory(perfDatabase)) {
        report(["engine", "perf_database"], `perf database directory not found: ${perfDatabase}`);
        return undefined;
      }
      return { type: "default", model, gpu, perfDatabase };
    }
  }
}

function resolveCapacity(role: RoleConfig, deployment: DeploymentFacts, report: Report): number | undefined {
  const kv = role.kv_cache;
  const capacity = kv.capacity;
  if (capacity.type === "default") {
    const model = deployment.model();
    const gpu = deployment.gpu();
    if (model === null || gpu === null) return undefined;
    const p = role.parallelism;
    try {
      return defaultKvCapacityBlocks({
        model,
        gpu,
        tensor: p.tensor,
        pipeline: p.pipeline,
        blockSize: kv.block_size,
        memoryFraction: capacity.memory_fraction,
        maxNumTokens: role.scheduler.max_batched_tokens,
        cudaGraphReservedBytes: capacity.cuda_graph_reserved_bytes ?? 0,
      }).blocks;
    } catch (err) {
      if (!(err instanceof ModelError)) throw err;
      report([...ROLE_PATH, "kv_cache", "capacity"], err.message);
      return undefined;
    }
  }
  if (capacity.blocks !== undefined) return capacity.blocks;
  // Schema guarantees bytes with an explicit block size and a numeric bytes_per_token here.
  const bytesPerToken = kv.bytes_per_token as number;
  const blocks = Math.floor(capacity.bytes! / (kv.block_size * bytesPerToken));
  if (blocks < 1) {
    report(
      [...ROLE_PATH, "kv_cache", "capacity", "bytes"],
      `${ROLE}.kv_cache.capacity.bytes=${capacity.bytes} holds no full KV block ` +
        `(block_size ${kv.block_size} x bytes_per_token ${bytesPerToken} bytes)`,
    );
    return undefined;
  }
  return blocks;
}

function resolveContextLength(
  engine: EngineConfig,
  lookup: ContextLengthLookup,
  deployment: DeploymentFacts,
  report: Report,
): number | undefined {
  if (engine.context_length !== "max") return engine.context_length;
  const found = lookupMaxContextLength(engine.model, lookup);
  if (found === undefined) {
    // An unknown model was already reported once at engine.model; say it only once.
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

function resolveSla(config: PredictConfigOutput): SlaSpec | null {
  const sla = config.evaluation.sla;
  if (sla === undefined) return null;
  if (sla.ttft_ms === undefined && sla.itl_ms === undefined && sla.e2e_ms === undefined) return null;
  return { ttftMs: sla.ttft_ms ?? null, itlMs: sla.itl_ms ?? null, e2eMs: sla.e2e_ms ?? null };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
