import type { EngineSpec, RunSpec, WorkerRoleSpec } from "../config/runSpec.js";
import { gpuSpec } from "../hardware/catalog.js";
import { HardwareError } from "../hardware/errors.js";
import { ModelError } from "../model/errors.js";
import { resolveModel } from "../model/resolve.js";
import {
  type BootstrapTiming,
  bootstrapFpmSha256,
  bootstrapLimitsFromCaps,
  bootstrapObservations,
  DEFAULT_BENCHMARK_GRANULARITY,
} from "../planner/perfModel/bootstrap.js";
import { PlannerCore } from "../planner/plannerCore.js";
import type { WarmupWindow } from "../planner/predictors/series.js";
import { extractMetricsFromMooncake } from "../planner/trafficWindows.js";
import type { EngineCapabilities, ForwardPassMetrics, PlannerSettings } from "../planner/types.js";
import { createTimingModel, type RoleTimings } from "../timing/index.js";
import { PassShape } from "../timing/passShape.js";
import type { TimingModel } from "../timing/timingModel.js";
import type { DynamoRequests } from "../traffic/dynamo/index.js";
import { TraceError } from "../traffic/traceError.js";
import { readWarmupTraceFiles, type WarmupTrace } from "../traffic/warmupTrace.js";
import type { CandidateReplays } from "./candidateReplays.js";
import { type BootstrapInfo, PlannerReplayAdapter } from "./plannerAdapter.js";
import { RetuneController } from "./retuneController.js";

/**
 * Reads `load_predictor_warmup_trace` (traffic/warmupTrace.ts: a Dynamo or a Mooncake trace, one
 * file or its shards). Null without one.
 */
export async function readWarmupTrace(settings: PlannerSettings): Promise<WarmupTrace | null> {
  const path = settings.loadPredictorWarmupTrace;
  return path === null ? null : readWarmupTraceFiles(path);
}

/**
 * Predictor warm-up windows from `load_predictor_warmup_trace` (`ai-dynamo/dynamo@8504b50:components/src/dynamo/planner/plugins/builtins/local_planner.py`): the trace's
 * requests bucketed by the throughput interval, as the reference's `offline/trace_data.py` does: a
 * Mooncake trace on its own (relative) timestamps, a Dynamo request trace's absolute timestamps from
 * its first request (arrival = the request's start), so windows align with that request.
 */
function warmupWindows(trace: WarmupTrace, settings: PlannerSettings): WarmupWindow[] {
  const rows =
    trace.format === "dynamo"
      ? {
          timestampMs: rebased(trace.requests.startMs),
          inputLength: trace.requests.inputLength,
          outputLength: trace.requests.outputLength,
        }
      : trace;
  return extractMetricsFromMooncake(rows, settings.throughputAdjustmentIntervalS);
}

function rebased(ms: Float64Array): Float64Array {
  let min = Number.POSITIVE_INFINITY;
  for (const x of ms) if (x < min) min = x;
  return ms.map((x) => x - min);
}

/** A role's capabilities as the Planner sees them (`ai-dynamo/dynamo@c78c42c:components/src/dynamo/replay/planner.py`). */
export function capabilitiesOf(role: WorkerRoleSpec): EngineCapabilities {
  return {
    numGpu: role.gpusPerWorker,
    gpuCostPerReplica: role.gpusPerWorker,
    maxNumBatchedTokens: role.maxBatchedTokens,
    maxNumSeqs: role.maxSequences,
    contextLength: role.maxModelLen ?? Number.MAX_SAFE_INTEGER,
    maxKvTokens: role.numGpuBlocks * role.blockSize * role.attentionData,
    kvCacheBlockSize: role.blockSize,
    // The worker's speculative depth, which wins over `planner.speculative_nextn` (`ai-dynamo/dynamo@4d3f672:components/src/dynamo/planner/core/throughput_scaling.py`).
    speculativeNextn: role.speculation?.numSpeculativeTokens ?? 0,
    attentionData: role.attentionData,
  };
}

/**
 * The timing that prices a role's bootstrap passes: the default (op-level) estimates for
 * `engine.model` on `engine.hardware`, even when the role's engines run `polynomial` or `fixed` timing
 * (seed 000 "Planner Performance Model": "The bootstrap uses AISimulate estimates even when
 * `engine.workers.<role>.timing.type` is `polynomial` or `fixed`"); then the Planner's model and
 * the simulated engines disagree until it has tuned on observed passes. A role on default timing
 * reuses its run's model. Throws ModelError / HardwareError when the model or GPU cannot be priced.
 */
async function bootstrapTiming(
  engine: EngineSpec,
  role: WorkerRoleSpec,
  run: TimingModel,
): Promise<TimingModel> {
  if (role.timing.type === "default") return run;
  const model = resolveModel(engine.model);
  const gpu = gpuSpec(engine.hardware);
  return createTimingModel(
    {
      type: "default",
      model,
      gpu,
      perfDatabase: null,
      hostOverhead: { perPassMs: null, perSequenceMs: null },
    },
    role,
  );
}

/** The start-up warning of an advisory replay (seed 000 "Replay in Advisory Mode"). */
export const ADVISORY_WARNING =
  "[ADVISORY] the Planner runs in advisory mode: it decides on every tick and applies nothing; " +
  "the replicas stay as configured and its changes are listed in planner.recommended_scaling_events";

/** The reference's warning when the perf-model bootstrap falls back (`*_load_only`). */
export const LOAD_ONLY_WARNING =
  "throughput-based scaling regression requires a perf-model bootstrap; falling back to load-based scaling only";

/**
 * The Planner without a bootstrapped perf model (`not_configured_load_only`,
 * `session_failed_load_only`): throughput-based scaling falls back to load-based scaling (seed 000
 * "Run from Python": "the log warns that throughput-based scaling falls back to load-based
 * scaling"). The tick becomes the millisecond gcd of the current tick and the load interval.
 * Retune-only mode, which never scales, is kept as it is.
 */
function loadOnlySettings(s: PlannerSettings): PlannerSettings {
  if (!s.enableThroughputScaling) return s;
  const ms = (x: number) => Math.round(x * 1000);
  let a = ms(s.scaleIntervalS);
  let b = ms(s.loadAdjustmentIntervalS);
  while (b !== 0) [a, b] = [b, a % b];
  return { ...s, enableThroughputScaling: false, enableLoadScaling: true, scaleIntervalS: a / 1000 };
}

/** Where the Planner's start-up messages go (the reference logs them; the CLI prints them on stderr). */
export interface PlannerMessages {
  warn?(line: string): void;
  info?(line: string): void;
}

/**
 * Builds the Planner for a run, or null when `planner` is disabled. For the `sla` target the
 * perf models are bootstrapped with synthetic forward passes priced by the op-level model
 * (`ai-dynamo/dynamo@c78c42c:components/src/dynamo/replay/planner.py`, `bootstrapTiming`), so the Planner starts from an estimate of the deployment.
 */
export async function createPlanner(
  spec: RunSpec,
  timings: RoleTimings,
  /** With `planner.retune`: the replayed Dynamo trace's requests and how candidates are replayed. */
  retune: {
    readonly requests: DynamoRequests;
    readonly replays: CandidateReplays;
    readonly log?: (line: string) => void;
  } | null = null,
  /** Predictor warm-up windows to use instead of `load_predictor_warmup_trace` (a retune candidate replay). */
  warmupOverride: readonly WarmupWindow[] | null = null,
  messages: PlannerMessages = {},
): Promise<PlannerReplayAdapter | null> {
  const configured = spec.planner;
  if (configured === null) return null;
  if (configured.advisory) messages.warn?.(ADVISORY_WARNING);
  const engine = spec.engine;
  const prefillRole = engine.mode === "disaggregated" ? engine.prefill : null;
  const decodeRole = engine.mode === "disaggregated" ? engine.decode : engine.aggregated;
  const caps = {
    prefill: prefillRole === null ? null : capabilitiesOf(prefillRole),
    decode: capabilitiesOf(decodeRole),
  };
  let bootstrap: { prefill: ForwardPassMetrics[]; decode: ForwardPassMetrics[] } | null = null;
  let info: BootstrapInfo = { status: "not_required" };
  if (configured.optimizationTarget === "sla" && configured.bootstrapPerfModel === false) {
    // No AIS/AIC identity (library API): nothing to price the benchmark passes with.
    info = { status: "not_configured_load_only" };
  } else if (configured.optimizationTarget === "sla") {
    const priced = await pricedBootstrap(engine, timings, prefillRole ?? decodeRole, decodeRole);
    if ("error" in priced) {
      messages.warn?.(
        `the Planner's perf-model bootstrap could not price ${engine.model} on ${engine.hardware} with the ` +
          `op-level estimates (${priced.error}); throughput regression will not be bootstrapped`,
      );
      info = { status: "session_failed_load_only", benchmark_granularity: DEFAULT_BENCHMARK_GRANULARITY };
    } else {
      const prefillCaps = caps.prefill ?? caps.decode;
      const prefill = bootstrapObservations("prefill", priced.prefill, bootstrapLimitsFromCaps(prefillCaps));
      const decode = bootstrapObservations(
        "decode",
        verifyingDecode(priced.decode, decodeRole),
        bootstrapLimitsFromCaps(caps.decode),
      );
      bootstrap = { prefill, decode };
      info = {
        status: "installed",
        benchmark_granularity: DEFAULT_BENCHMARK_GRANULARITY,
        prefill_fpm_count: prefill.length,
        decode_fpm_count: decode.length,
        fpm_sha256: bootstrapFpmSha256(prefill, decode),
      };
    }
  }
  const loadOnly = info.status === "not_configured_load_only" || info.status === "session_failed_load_only";
  if (loadOnly) messages.warn?.(LOAD_ONLY_WARNING);
  const settings = loadOnly ? loadOnlySettings(configured) : configured;
  const retuneOn = settings.retune !== undefined && settings.retune !== null;
  const warmupTrace =
    settings.enableThroughputScaling && warmupOverride === null ? await readWarmupTrace(settings) : null;
  const warmup = warmupOverride ?? (warmupTrace === null ? null : warmupWindows(warmupTrace, settings));
  const core = new PlannerCore({ settings, caps, bootstrap, warmup });
  const start = { prefill: prefillRole?.replicas ?? 0, decode: decodeRole.replicas };
  let controller: RetuneController | null = null;
  if (retuneOn) {
    if (retune === null) throw new Error("internal: planner.retune needs the Dynamo trace's requests");
    const history = warmupTrace === null ? null : retuneWarmupHistory(warmupTrace, retune.requests, settings);
    controller = new RetuneController(
      settings === configured ? spec : { ...spec, planner: settings },
      retune.requests,
      { prefill: prefillRole === null ? null : start.prefill, decode: start.decode },
      retune.replays,
      retune.log,
      history,
    );
  }
  const speculating = (decodeRole.speculation ?? null) !== null;
  return new PlannerReplayAdapter(core, start, info, controller, speculating);
}

/**
 * The bootstrap's decode passes of a speculating role are verify passes, every sequence with its
 * K drafts (as AIConfigurator prices a decode step with `nextn`), so the Planner's decode
 * regression starts from what the workers' observed passes will cost.
 */
function verifyingDecode(timing: TimingModel, role: WorkerRoleSpec): BootstrapTiming {
  const spec = role.speculation ?? null;
  if (spec === null) return timing;
  const k = spec.numSpeculativeTokens;
  // A verify pass: no prefill half; every sequence verifies its K drafts.
  const pass = new PassShape();
  return {
    prefillMs: (count, isl, prefix) => timing.prefillMs(count, isl, prefix),
    decodeMs: (batch, kv, ctx, total) =>
      timing.passMs(pass.setDecode(batch, kv, ctx, total).setDrafts(batch, batch * k)),
  };
}

/** The bootstrap timing of the prefill and decode roles (the aggregated role is both). */
async function pricedBootstrap(
  engine: EngineSpec,
  timings: RoleTimings,
  prefillRole: WorkerRoleSpec,
  decodeRole: WorkerRoleSpec,
): Promise<{ prefill: TimingModel; decode: TimingModel } | { error: string }> {
  const runPrefill = timings.mode === "disaggregated" ? timings.prefill : timings.aggregated;
  const runDecode = timings.mode === "disaggregated" ? timings.decode : timings.aggregated;
  try {
    const prefill = await bootstrapTiming(engine, prefillRole, runPrefill);
    const decode =
      prefillRole === decodeRole ? prefill : await bootstrapTiming(engine, decodeRole, runDecode);
    return { prefill, decode };
  } catch (err) {
    if (err instanceof ModelError || err instanceof HardwareError) return { error: err.message };
    throw err;
  }
}

/**
 * With retune and throughput scaling, `load_predictor_warmup_trace` is history before the replayed
 * trace (docs/retune.md §1): a Dynamo request trace that ends at or before the first replayed
 * request, on the same absolute timestamps.
 */
function retuneWarmupHistory(
  trace: WarmupTrace,
  replayed: DynamoRequests,
  settings: PlannerSettings,
): DynamoRequests {
  const path = settings.loadPredictorWarmupTrace ?? "";
  if (trace.format !== "dynamo") {
    throw new TraceError(
      path,
      0,
      "planner.retune with throughput scaling needs load_predictor_warmup_trace to be a Dynamo request trace (dynamo.request.trace.v1)",
    );
  }
  const first = replayed.count > 0 ? replayed.startMs[0] : Number.POSITIVE_INFINITY;
  const h = trace.requests;
  let last = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < h.count; i++) last = Math.max(last, h.startMs[i]);
  if (last > first) {
    throw new TraceError(
      path,
      0,
      `load_predictor_warmup_trace must end at or before the first replayed request (its last request arrives at ${last} ms, the replay's first at ${first} ms)`,
    );
  }
  return h;
}
