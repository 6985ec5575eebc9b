/**
 * Validated config → RunSpec. Here live the steps that need more than the document: the file
 * system (trace paths, `context_length: max`), derived numbers (`requests_per_load_unit`, KV
 * bytes → blocks), and refusals of valid config that fleetsim cannot simulate yet.
 */
import { statSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
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
  const aggregated = resolveRole(config.engine.workers.aggregated, report);
  const maxModelLen = resolveContextLength(config.engine, ctx.contextLength, report);

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

function resolveRole(role: RoleConfig, report: Report): Omit<WorkerRoleSpec, "maxModelLen"> | undefined {
  const timing = resolveTiming(role, report);
  const numGpuBlocks = resolveCapacity(role, report);
  if (timing === undefined || numGpuBlocks === undefined) return undefined;
  const p = role.parallelism;
  return {
    replicas: p.replicas,
    tensor: p.tensor,
    pipeline: p.pipeline,
    attentionData: p.attention_data,
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

function resolveTiming(role: RoleConfig, report: Report): TimingSpec | undefined {
  const t = role.timing;
  switch (t.type) {
    case "polynomial":
      return { type: "polynomial" };
    case "fixed":
      return { type: "fixed", prefillMs: t.prefill_ms, decodeMs: t.decode_ms };
    case "default":
      report(
        [...ROLE_PATH, "timing", "type"],
        `${ROLE}.timing.type='default' (the AIC` +
          " op-level forward-pass model) cannot be priced by fleetsim yet: " +
          "the default timing model arrives with the op-level timing model. " +
          "Set timing: {type: polynomial} (or {type: fixed, prefill_ms: X, decode_ms: Y})",
      );
      return undefined;
  }
}

function resolveCapacity(role: RoleConfig, report: Report): number | undefined {
  const kv = role.kv_cache;
  const capacity = kv.capacity;
  if (capacity.type === "default") {
    report(
      [...ROLE_PATH, "kv_cache", "capacity", "type"],
      `${ROLE}.kv_cache.capacity.type='default' (KV capacity` +
        " from GPU memory) cannot be computed by fleetsim yet: " +
        "the default KV capacity arrives with the op-level timing model. Set capacity: {type: fixed, blocks: N}",
    );
    return undefined;
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
  report: Report,
): number | undefined {
  if (engine.context_length !== "max") return engine.context_length;
  const found = lookupMaxContextLength(engine.model, lookup);
  if (found === undefined) {
    report(
      ["engine", "context_length"],
      `cannot resolve context_length 'max' for model '${engine.model}' offline: no config.json in a local ` +
        "model directory or the Hugging Face cache, and the model is not in fleetsim's built-in table. " +
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

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
