import type { RunSpec, WorkerRoleSpec } from "../config/runSpec.js";
import {
  bootstrapFpmSha256,
  bootstrapLimitsFromCaps,
  bootstrapObservations,
  DEFAULT_BENCHMARK_GRANULARITY,
} from "../planner/perfModelBootstrap.js";
import { PlannerCore } from "../planner/plannerCore.js";
import type { WarmupWindow } from "../planner/predictors/series.js";
import { extractMetricsFromMooncake } from "../planner/trafficWindows.js";
import type { EngineCapabilities, ForwardPassMetrics, PlannerSettings } from "../planner/types.js";
import type { RoleTimings } from "../timing/index.js";
import type { TimingModel } from "../timing/timingModel.js";
import type { DynamoRequests } from "../traffic/dynamoTrace.js";
import { loadMooncakeTrace } from "../traffic/mooncake.js";
import { type BootstrapInfo, PlannerReplayAdapter } from "./plannerAdapter.js";
import { RetuneController } from "./retuneController.js";

/**
 * Predictor warm-up windows from `load_predictor_warmup_trace` (planner.md §4.1): the trace's
 * requests bucketed by the throughput interval. Its timestamps are normalized to start at 0, so
 * windows align with the first request rather than with wall-clock interval boundaries.
 */
async function warmupWindows(settings: PlannerSettings): Promise<WarmupWindow[] | null> {
  const path = settings.loadPredictorWarmupTrace;
  if (path === null) return null;
  // Block sizes do not matter here: only timestamps and lengths are read.
  const table = await loadMooncakeTrace(path, { traceBlockSize: 512, engineBlockSize: 512 });
  return extractMetricsFromMooncake(
    { timestampMs: table.timestampMs, inputLength: table.inputLength, outputLength: table.outputLength },
    settings.throughputAdjustmentIntervalS,
  );
}

/** A role's capabilities as the Planner sees them (planner.md §8.5 step 2). */
export function capabilitiesOf(role: WorkerRoleSpec): EngineCapabilities {
  return {
    numGpu: role.gpusPerWorker,
    gpuCostPerReplica: role.gpusPerWorker,
    maxNumBatchedTokens: role.maxBatchedTokens,
    maxNumSeqs: role.maxSequences,
    contextLength: role.maxModelLen ?? Number.MAX_SAFE_INTEGER,
    maxKvTokens: role.numGpuBlocks * role.blockSize * role.attentionData,
    kvCacheBlockSize: role.blockSize,
    speculativeNextn: 0,
    attentionData: role.attentionData,
  };
}

/**
 * Builds the Planner for a run, or null when `planner` is disabled. For the `sla` target the
 * perf models are bootstrapped with synthetic forward passes priced by the run's own timing
 * model (planner.md §8.5), so the Planner starts from the deployment's performance.
 */
export async function createPlanner(
  spec: RunSpec,
  timings: RoleTimings,
  retune: { readonly requests: DynamoRequests; readonly log?: (line: string) => void } | null = null,
): Promise<PlannerReplayAdapter | null> {
  const settings = spec.planner;
  if (settings === null) return null;
  const engine = spec.engine;
  const prefillRole = engine.mode === "disaggregated" ? engine.prefill : null;
  const decodeRole = engine.mode === "disaggregated" ? engine.decode : engine.aggregated;
  const caps = {
    prefill: prefillRole === null ? null : capabilitiesOf(prefillRole),
    decode: capabilitiesOf(decodeRole),
  };
  let bootstrap: { prefill: ForwardPassMetrics[]; decode: ForwardPassMetrics[] } | null = null;
  let info: BootstrapInfo = { status: "not_required" };
  if (settings.optimizationTarget === "sla") {
    const prefillTiming: TimingModel =
      timings.mode === "disaggregated" ? timings.prefill : timings.aggregated;
    const decodeTiming: TimingModel = timings.mode === "disaggregated" ? timings.decode : timings.aggregated;
    const prefillCaps = caps.prefill ?? caps.decode;
    const prefill = bootstrapObservations("prefill", prefillTiming, bootstrapLimitsFromCaps(prefillCaps));
    const decode = bootstrapObservations("decode", decodeTiming, bootstrapLimitsFromCaps(caps.decode));
    bootstrap = { prefill, decode };
    info = {
      status: "installed",
      benchmark_granularity: DEFAULT_BENCHMARK_GRANULARITY,
      prefill_fpm_count: prefill.length,
      decode_fpm_count: decode.length,
      fpm_sha256: bootstrapFpmSha256(prefill, decode),
    };
  }
  const warmup = settings.enableThroughputScaling ? await warmupWindows(settings) : null;
  const core = new PlannerCore({ settings, caps, bootstrap, warmup });
  const start = { prefill: prefillRole?.replicas ?? 0, decode: decodeRole.replicas };
  let controller: RetuneController | null = null;
  if (settings.retune !== undefined && settings.retune !== null) {
    if (retune === null) throw new Error("internal: planner.retune needs the Dynamo trace's requests");
    controller = new RetuneController(
      spec,
      retune.requests,
      { prefill: prefillRole === null ? null : start.prefill, decode: start.decode },
      retune.log,
    );
  }
  return new PlannerReplayAdapter(core, start, info, controller);
}
