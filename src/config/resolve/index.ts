/**
 * Validated config → RunSpec. Here live the steps that need more than the document: the file
 * system (trace paths), derived numbers (`requests_per_load_unit`), and the router's defaults;
 * the engine (model, GPUs, KV capacity, `context_length: max`, refusals of valid config that
 * fleetsim cannot price) is resolved by `config/resolve/engine.ts`, the Planner by `config/resolve/planner.ts`.
 */
import { existsSync, statSync } from "node:fs";
import { resolve as resolvePath } from "node:path";
import { DEFAULT_USD_PER_GPU_HOUR } from "../../hardware/prices.js";
import { expandTracePath } from "../../traffic/dynamo/paths.js";
import { TraceError } from "../../traffic/traceError.js";
import { readCalibrationProfile } from "../calibrationProfile.js";
import { camelKeys } from "../camelKeys.js";
import type { ContextLengthLookup } from "../contextLength.js";
import type { PathIssue, PathSegment } from "../issues.js";
import type {
  ClientSpec,
  ExecutionSpec,
  RouterSpec,
  RunSpec,
  SlaSpec,
  SourceSpec,
  Stack,
} from "../runSpec.js";
import type { PredictConfigOutput } from "../schema/index.js";
import { roundHalfEven } from "../schema/primitives.js";
import type { RouterConfig } from "../schema/router.js";
import type { TrafficConfig } from "../schema/traffic.js";
import { type Report, resolveEngine } from "./engine.js";
import { resolvePlanner } from "./planner.js";
import { resolveLoad, resolveStop, resolveSyntheticSource } from "./traffic.js";

export { roundHalfEven };

export interface ResolveContext {
  readonly stack: Stack;
  /** Directory of the config file: relative trace paths are resolved against it. */
  readonly configDir: string;
  /** The working directory: a relative `planner.load_predictor_warmup_trace` resolves against it. */
  readonly workDir: string;
  readonly contextLength: ContextLengthLookup;
}

export type ResolveResult =
  | { readonly ok: true; readonly spec: RunSpec }
  | { readonly ok: false; readonly issues: PathIssue[] };

export function resolveRunSpec(config: PredictConfigOutput, ctx: ResolveContext): ResolveResult {
  const issues: PathIssue[] = [];
  const report: Report = (path: readonly PathSegment[], message: string): void => {
    issues.push({ path, message, at: "value" });
  };

  const source = resolveSource(config.traffic, ctx.configDir, report);
  const load = resolveLoad(config.traffic.load);
  const stop = resolveStop(config.traffic);
  const engine = resolveEngine(config.engine, ctx.configDir, ctx.contextLength, report);
  const planner = resolvePlanner(config, ctx.workDir, report);
  const client = resolveClient(config, ctx.configDir, report);

  if (
    issues.length > 0 ||
    source === undefined ||
    engine === undefined ||
    planner === undefined ||
    client === undefined
  ) {
    return { ok: false, issues };
  }
  return {
    ok: true,
    spec: {
      stack: ctx.stack,
      source,
      load,
      stop,
      engine,
      router: resolveRouter(config.router),
      sla: resolveSla(config),
      planner,
      execution: resolveExecution(config),
      client,
      cost: { usdPerGpuHour: resolvePrices(config) },
    },
  };
}

/** The default GPU-hour prices with the config's overrides (docs/cost.md). */
function resolvePrices(config: PredictConfigOutput): Record<string, number> {
  const out: Record<string, number> = { ...DEFAULT_USD_PER_GPU_HOUR };
  for (const [id, price] of Object.entries(config.cost.usd_per_gpu_hour))
    if (price !== undefined) out[id] = price;
  return out;
}

export function resolveExecution(config: PredictConfigOutput): ExecutionSpec {
  return { resources: camelKeys(config.execution.resources) };
}

/** `client:`; a profile's fitted overhead applies where the config does not set its own. */
function resolveClient(
  config: PredictConfigOutput,
  configDir: string,
  report: Report,
): ClientSpec | undefined {
  const c = config.client;
  let profileRequestMs: number | null = null;
  let profile: string | undefined;
  if (c.profile !== undefined) {
    const read = readCalibrationProfile(resolvePath(configDir, c.profile));
    if (!read.ok) {
      report(["client", "profile"], read.why);
      return undefined;
    }
    profileRequestMs = read.profile.client.overhead.request_ms;
    profile = read.profile.name;
  }
  return {
    requestMs: c.overhead.request_ms ?? profileRequestMs ?? 0,
    responseMs: c.overhead.response_ms,
    timeoutMs: c.timeout_seconds === null ? null : c.timeout_seconds * 1000,
    ...(profile === undefined ? {} : { profile }),
  };
}

function resolveSource(traffic: TrafficConfig, configDir: string, report: Report): SourceSpec | undefined {
  const src = traffic.source;
  if (src.type !== "trace") return resolveSyntheticSource(src);
  if (src.format === "dynamo") return resolveDynamoSource(src.paths, src.block_size, configDir, report);
  if (src.format === "weka") {
    const corpus = resolvePath(configDir, src.path);
    if (!existsSync(corpus)) {
      report(["traffic", "source", "paths", 0], `Weka corpus not found: ${corpus}`);
      return undefined;
    }
    return {
      type: "trace",
      format: "weka",
      path: corpus,
      blockSize: src.block_size,
      nestedTimestampBasis: src.nested_timestamp_basis,
    };
  }
  const path = resolvePath(configDir, src.path);
  // Checked here rather than when the trace is read so the error can point at the config line.
  const problem = traceFileProblem(path);
  if (problem !== null) {
    report(["traffic", "source", "paths", 0], `${problem}: ${path}`);
    return undefined;
  }
  return { type: "trace", format: src.format, path, blockSize: src.block_size };
}

/**
 * Expands every Dynamo trace path (file, directory of shards, last-segment pattern) now, so a
 * path that names no file is reported at its own config line; the spec holds the files to read.
 */
function resolveDynamoSource(
  paths: readonly string[],
  blockSize: number | null,
  configDir: string,
  report: Report,
): SourceSpec | undefined {
  const files: string[] = [];
  let ok = true;
  paths.forEach((p, i) => {
    try {
      files.push(...expandTracePath(resolvePath(configDir, p)));
    } catch (err) {
      if (!(err instanceof TraceError)) throw err;
      report(["traffic", "source", "paths", i], err.message);
      ok = false;
    }
  });
  if (!ok) return undefined;
  const unique = [...new Set(files)];
  return { type: "trace", format: "dynamo", paths: unique, path: unique[0], blockSize };
}

function resolveRouter(router: RouterConfig): RouterSpec {
  if (router.policy === "round_robin") return { policy: "round_robin" };
  return {
    policy: "kv_router",
    overlapScoreCredit: router.overlap_score_credit,
    prefillLoadScale: router.prefill_load_scale,
    temperature: router.temperature,
    prefillLoadModel: router.prefill_load_model.type,
  };
}

function resolveSla(config: PredictConfigOutput): SlaSpec | null {
  const sla = config.evaluation.sla;
  if (sla === undefined) return null;
  if (sla.ttft_ms === undefined && sla.itl_ms === undefined && sla.e2e_ms === undefined) return null;
  return { ttftMs: sla.ttft_ms ?? null, itlMs: sla.itl_ms ?? null, e2eMs: sla.e2e_ms ?? null };
}

/** Why `path` cannot be read as a trace file, or null: absent, a directory, a device or FIFO. */
function traceFileProblem(path: string): string | null {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR"
      ? "trace file not found"
      : `cannot read trace file (${code})`;
  }
  if (st.isFile()) return null;
  if (st.isDirectory()) return "a Mooncake trace is one file, not a directory";
  return "the trace is not a regular file (a device, FIFO or socket)";
}
