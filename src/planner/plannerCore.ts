import { advanceLoad, validEngineLimits } from "./loadScaling/index.js";
import { FpmRegressionModel, type QueryPerfModel, regressionOptions } from "./perfModel/index.js";
import { SeriesPredictors, type WarmupWindow } from "./predictors/series.js";
import { findEngineCapacityRps } from "./throughputCapacity.js";
import {
  advanceThroughput,
  capacityRequestFor,
  demandRps,
  engineRpsOf,
  resolveAcceptLength,
} from "./throughputScaling.js";
import type {
  EngineCapabilities,
  ForwardPassMetrics,
  PlannerEffects,
  PlannerSettings,
  ScalingDecision,
  TickDiagnostics,
  TickInput,
  WorkerCounts,
} from "./types.js";

/**
 * Which builtin loops a tick runs and what it reads (`ai-dynamo/dynamo@0272cbd:components/src/dynamo/planner/core/types.py`
 * `ScheduledTick`; the input flags as the reference's plugin adapter sets them,
 * `dynamo/planner/plugins/orchestrator/engine_adapter.py` in ai-dynamo 1.6.0.dev20261023).
 */
export interface ScheduledTick {
  readonly atS: number;
  readonly runLoadScaling: boolean;
  readonly runThroughputScaling: boolean;
  /** The throughput loop consumes the traffic window merged since its previous run. */
  readonly needTrafficMetrics: boolean;
  /** The window the throughput loop reads is its full interval (0 without traffic metrics). */
  readonly useFullTrafficMetrics: boolean;
  readonly trafficMetricsDurationS: number;
  /** The load loop reads the workers' FPMs; an SLA Planner tunes its perf model on them too. */
  readonly needWorkerFpm: boolean;
}

export interface PlannerCoreInit {
  readonly settings: PlannerSettings;
  /** `prefill` is null in an aggregated deployment (its pool lives under `decode`). */
  readonly caps: { readonly prefill: EngineCapabilities | null; readonly decode: EngineCapabilities };
  /** Synthetic benchmark FPMs installed into the SLA perf models before the first tick (`ai-dynamo/dynamo@c78c42c:components/src/dynamo/replay/planner.py`). */
  readonly bootstrap: {
    readonly prefill: readonly ForwardPassMetrics[];
    readonly decode: readonly ForwardPassMetrics[];
  } | null;
  /** Trace windows that pre-warm the load predictors (`load_predictor_warmup_trace`). */
  readonly warmup: readonly WarmupWindow[] | null;
  /**
   * Perf models to price passes with instead of the regressions learned from FPMs (a library
   * caller's own pricing; the tests' known planes). Kept across `updateSettings`.
   */
  readonly perfModels?: { readonly prefill: QueryPerfModel | null; readonly decode: QueryPerfModel | null };
}

const INTERVAL_TOLERANCE = 1e-9;

function isMultiple(t: number, interval: number): boolean {
  const k = t / interval;
  return Math.abs(k - Math.round(k)) <= INTERVAL_TOLERANCE * Math.max(1, Math.abs(k));
}

/**
 * The Planner's decision pipeline for one deployment (`ai-dynamo/dynamo@9452c2a:components/src/dynamo/planner/plugins/orchestrator/engine_adapter.py`): every `scale_interval` a
 * tick runs the builtin loops that are due — the throughput loop (predict the next window's
 * load, size replicas from per-engine capacity under the SLA; with load scaling on it only sets
 * lower bounds) every `throughput_adjustment_interval`, then the load loop (±1 from forward-pass
 * metrics against thresholds or the SLA perf model) every `load_adjustment_interval`. Shared
 * cross-tick state: perf models, predictors, throughput lower bounds (1/1 initially), last KV-hit
 * rate and accept length.
 */
export class PlannerCore {
  private current: PlannerSettings;
  private readonly caps: PlannerCoreInit["caps"];
  private perf: { prefill: QueryPerfModel | null; decode: QueryPerfModel | null };
  private readonly suppliedPerf: NonNullable<PlannerCoreInit["perfModels"]> | null;
  private predictors: SeriesPredictors | null;
  /**
   * Every forward pass fed to each perf model, bootstrap included, in order: a change of the perf
   * models' options (`updateSettings`) rebuilds them from it. Kept only with the `sla` target.
   */
  private readonly fpmLog: { prefill: ForwardPassMetrics[]; decode: ForwardPassMetrics[] } = {
    prefill: [],
    decode: [],
  };
  /** Live forward passes are logged only when a retune may change the perf models' options. */
  private readonly logLiveFpms: boolean;
  private lowerBound: { prefill: number | null; decode: number | null } = { prefill: 1, decode: 1 };
  private lastKvHitRate: number | null = null;
  private lastAcceptLength: number | null = null;

  constructor(init: PlannerCoreInit) {
    const s = init.settings;
    this.current = s;
    this.caps = init.caps;
    this.logLiveFpms =
      s.optimizationTarget === "sla" &&
      s.retune !== undefined &&
      s.retune !== null &&
      s.retune.plannerDimensions.length > 0;
    const boot = init.bootstrap;
    if (s.optimizationTarget === "sla" && boot !== null) {
      if (s.mode === "agg") {
        // Aggregated: prefill and decode benchmark points go into the one model (`ai-dynamo/dynamo@c78c42c:components/src/dynamo/replay/planner.py`).
        this.fpmLog.decode.push(...boot.prefill, ...boot.decode);
      } else {
        this.fpmLog.prefill.push(...boot.prefill);
        this.fpmLog.decode.push(...boot.decode);
      }
    }
    this.suppliedPerf = init.perfModels ?? null;
    this.perf = this.buildPerfModels();
    this.predictors = s.enableThroughputScaling ? seriesPredictorsOf(s) : null;
    if (this.predictors !== null && init.warmup !== null) this.predictors.warm(init.warmup);
  }

  /** The settings in force (updated between ticks by `updateSettings`). */
  get settings(): PlannerSettings {
    return this.current;
  }

  /** Perf models for the settings in force, fed every forward pass logged so far. */
  private buildPerfModels(): { prefill: QueryPerfModel | null; decode: QueryPerfModel | null } {
    if (this.suppliedPerf !== null) return { ...this.suppliedPerf };
    const s = this.current;
    if (s.optimizationTarget !== "sla") return { prefill: null, decode: null };
    const opts = regressionOptions(s);
    if (s.mode === "agg") {
      const model = new FpmRegressionModel("aggregated", opts);
      model.loadBenchmarkFpms(this.fpmLog.decode);
      return { prefill: null, decode: model };
    }
    const prefill = new FpmRegressionModel("prefill", opts);
    const decode = new FpmRegressionModel("decode", opts);
    prefill.loadBenchmarkFpms(this.fpmLog.prefill);
    decode.loadBenchmarkFpms(this.fpmLog.decode);
    return { prefill, decode };
  }

  /**
   * Changes Planner fields between ticks (a retune decision's `planner_changes`, docs/retune.md §9):
   * the next tick runs with them. The scaling flags, the intervals and the mode cannot change here.
   * A change of `max_num_fpm_samples`, `fpm_sample_bucket_size` or `load_min_observations` rebuilds
   * the perf models from every forward pass seen so far (bootstrap included), so they equal models
   * that had the new options from the start. A change of the load predictor's fields installs
   * `predictors` (a predictor the caller prepared on its warm-up traffic); without it, a fresh one
   * is built and warmed on `warmup` when given.
   */
  updateSettings(
    partial: Partial<PlannerSettings>,
    opts: { readonly predictors?: SeriesPredictors; readonly warmup?: readonly WarmupWindow[] } = {},
  ): void {
    const before = this.current;
    const next: PlannerSettings = { ...before, ...partial };
    for (const k of FIXED_FIELDS) {
      if (next[k] !== before[k]) throw new Error(`internal: PlannerCore.updateSettings cannot change ${k}`);
    }
    this.current = next;
    const perfChanged =
      next.maxNumFpmSamples !== before.maxNumFpmSamples ||
      next.fpmSampleBucketSize !== before.fpmSampleBucketSize ||
      next.loadMinObservations !== before.loadMinObservations;
    if (perfChanged && this.current.optimizationTarget === "sla") {
      if (!this.logLiveFpms)
        throw new Error("internal: perf-model options changed without a forward-pass log");
      this.perf = this.buildPerfModels();
    }
    const predictorChanged = PREDICTOR_FIELDS.some((k) => next[k] !== before[k]);
    if (next.enableThroughputScaling && (predictorChanged || opts.predictors !== undefined)) {
      if (opts.predictors !== undefined) {
        this.predictors = opts.predictors;
      } else {
        const p = seriesPredictorsOf(next);
        if (opts.warmup !== undefined) p.warm(opts.warmup);
        this.predictors = p;
      }
    }
  }

  /** The first tick is one scale interval after the start (`ai-dynamo/dynamo@9452c2a:components/src/dynamo/planner/plugins/orchestrator/engine_adapter.py`). */
  initialTickS(startS: number): number {
    return startS + this.settings.scaleIntervalS;
  }

  /** Which loops run at `atS`. */
  schedule(atS: number): ScheduledTick {
    const s = this.settings;
    const loadDue = isMultiple(atS, s.loadAdjustmentIntervalS);
    const runLoad = s.enableLoadScaling && loadDue;
    const runThroughput = s.enableThroughputScaling && isMultiple(atS, s.throughputAdjustmentIntervalS);
    return {
      atS,
      runLoadScaling: runLoad,
      runThroughputScaling: runThroughput,
      needTrafficMetrics: runThroughput,
      useFullTrafficMetrics: runThroughput,
      trafficMetricsDurationS: runThroughput ? s.throughputAdjustmentIntervalS : 0,
      needWorkerFpm: runLoad || (s.optimizationTarget === "sla" && loadDue),
    };
  }

  tick(input: TickInput): PlannerEffects {
    const s = this.settings;
    const scheduled = this.schedule(input.nowS);
    const diagnostics: TickDiagnostics = {};
    this.observeFpm(input);
    if (input.traffic !== null) {
      if (input.traffic.kvHitRate !== null) this.lastKvHitRate = input.traffic.kvHitRate;
      if (input.traffic.acceptLength !== null) this.lastAcceptLength = input.traffic.acceptLength;
    }
    const agg = s.mode === "agg";
    const current = {
      prefill: agg ? null : input.workers.readyPrefill,
      decode: input.workers.readyDecode ?? 0,
    };
    let decision: ScalingDecision | null = null;

    if (scheduled.runThroughputScaling) {
      decision = this.throughput(input, current, diagnostics);
    }
    if (scheduled.runLoadScaling) {
      const acceptLength = resolveAcceptLength(
        this.lastAcceptLength,
        this.caps.decode.speculativeNextn,
        s.speculativeNextn,
      );
      const load = advanceLoad({
        settings: s,
        mode: s.mode,
        workers: input.workers,
        fpmPrefill: input.fpmPrefill,
        fpmDecode: input.fpmDecode,
        caps: this.caps,
        perf: this.perf,
        kvHitRate: this.lastKvHitRate,
        acceptLength,
        lowerBound: s.enableThroughputScaling ? this.lowerBound : null,
      });
      // On a combined tick the throughput loop only refreshed the lower bound; the load loop decides.
      decision = load.decision;
      diagnostics.loadDecisionReason = load.reason;
      if (load.reasonPrefill !== undefined) diagnostics.loadDecisionReasonPrefill = load.reasonPrefill;
      if (load.reasonDecode !== undefined) diagnostics.loadDecisionReasonDecode = load.reasonDecode;
      diagnostics.estimatedTtftMs = load.estimatedTtftMs;
      diagnostics.estimatedItlMs = load.estimatedItlMs;
      diagnostics.loadMetadataAvailable = load.metadataAvailable;
    }
    if (s.enableThroughputScaling) {
      // The lower bounds are the throughput loop's state, reported on every tick as the reference
      // reports them (1 until the loop first runs).
      diagnostics.throughputLowerBoundPrefill = this.lowerBound.prefill;
      diagnostics.throughputLowerBoundDecode = this.lowerBound.decode;
    }
    return { scaleTo: changed(decision, current), nextTickS: input.nowS + s.scaleIntervalS, diagnostics };
  }

  private observeFpm(input: TickInput): void {
    if (this.perf.prefill !== null && input.fpmPrefill !== null) {
      for (const f of input.fpmPrefill) {
        this.perf.prefill.addObservation(f);
        if (this.logLiveFpms) this.fpmLog.prefill.push(f);
      }
    }
    if (this.perf.decode !== null && input.fpmDecode !== null) {
      for (const f of input.fpmDecode) {
        this.perf.decode.addObservation(f);
        if (this.logLiveFpms) this.fpmLog.decode.push(f);
      }
    }
  }

  private throughput(
    input: TickInput,
    current: { prefill: number | null; decode: number },
    diagnostics: TickDiagnostics,
  ): ScalingDecision | null {
    const s = this.settings;
    let demand: number | null = null;
    let predictFailed = false;
    let isl = 0;
    let osl = 0;
    const traffic = input.traffic;
    if (traffic !== null && this.predictors !== null) {
      const forecast = this.predictors.observeAndPredict({
        numReq: traffic.numReq,
        isl: traffic.isl,
        osl: traffic.osl,
      });
      if (forecast === null) {
        predictFailed = true;
      } else {
        diagnostics.predictedNumReq = forecast.numReq;
        diagnostics.predictedIsl = forecast.isl;
        diagnostics.predictedOsl = forecast.osl;
        diagnostics.predictedKvHitRate = this.lastKvHitRate;
        demand = demandRps(forecast.numReq, traffic.durationS);
        isl = forecast.isl;
        osl = forecast.osl;
      }
    }
    // The roles the throughput loop sizes (a demand of 0 sizes none: each holds at its floor), and
    // whether each has the engine limits its perf model needs (`throughput_scaling.py` in ai-dynamo
    // 1.6.0.dev20261023: `_throughput_agg`, `_compute_prefill_replicas`, `_compute_decode_replicas`).
    if (demand !== null && demand !== 0) {
      diagnostics.throughputMetadataAvailable =
        s.mode === "agg"
          ? { decode: validEngineLimits(this.caps.decode) }
          : { prefill: validEngineLimits(this.caps.prefill), decode: validEngineLimits(this.caps.decode) };
    }
    const acceptLength = resolveAcceptLength(
      this.lastAcceptLength,
      this.caps.decode.speculativeNextn,
      s.speculativeNextn,
    );
    const shape = { isl, osl, kvHitRate: this.lastKvHitRate, acceptLength };
    const sla = { ttftMs: s.ttftMs, itlMs: s.itlMs };
    let rpsPrefill: number | null = null;
    let rpsDecode: number | null = null;
    if (demand !== null && isl > 0) {
      if (s.mode === "agg") {
        const model = this.perf.decode;
        if (model !== null) {
          rpsDecode = engineRpsOf(
            findEngineCapacityRps("agg", this.caps.decode, model, capacityRequestFor("agg", sla, shape)),
          );
        }
      } else {
        const pm = this.perf.prefill;
        const dm = this.perf.decode;
        const pc = this.caps.prefill;
        if (pm !== null && pc !== null) {
          rpsPrefill = engineRpsOf(
            findEngineCapacityRps("prefill", pc, pm, capacityRequestFor("prefill", sla, shape)),
          );
        }
        if (dm !== null) {
          rpsDecode = engineRpsOf(
            findEngineCapacityRps("decode", this.caps.decode, dm, capacityRequestFor("decode", sla, shape)),
          );
        }
      }
    }
    diagnostics.engineRpsPrefill = rpsPrefill;
    diagnostics.engineRpsDecode = rpsDecode;
    const outcome = advanceThroughput({
      settings: s,
      mode: s.mode,
      current,
      demandRps: traffic === null ? null : demand,
      engineRps: { prefill: rpsPrefill, decode: rpsDecode },
      gpu: { prefill: this.caps.prefill?.gpuCostPerReplica ?? 0, decode: this.caps.decode.gpuCostPerReplica },
      predictFailed,
    });
    if (outcome.lowerBound !== null) {
      this.lowerBound = {
        prefill: outcome.lowerBound.prefill ?? this.lowerBound.prefill,
        decode: outcome.lowerBound.decode ?? this.lowerBound.decode,
      };
    }
    diagnostics.throughputLowerBoundPrefill = this.lowerBound.prefill;
    diagnostics.throughputLowerBoundDecode = this.lowerBound.decode;
    diagnostics.throughputDecisionReason = outcome.reason;
    if (outcome.reasonPrefill !== null) diagnostics.throughputDecisionReasonPrefill = outcome.reasonPrefill;
    if (outcome.reasonDecode !== null) diagnostics.throughputDecisionReasonDecode = outcome.reasonDecode;
    return outcome.decision;
  }
}

/** Fields `updateSettings` may not change (they shape the tick schedule or the models' kind). */
const FIXED_FIELDS = [
  "mode",
  "optimizationTarget",
  "enableThroughputScaling",
  "enableLoadScaling",
  "throughputAdjustmentIntervalS",
  "loadAdjustmentIntervalS",
  "scaleIntervalS",
] as const satisfies readonly (keyof PlannerSettings)[];

const PREDICTOR_FIELDS = [
  "loadPredictor",
  "loadPredictorLog1p",
  "prophetWindowSize",
  "kalmanQLevel",
  "kalmanQTrend",
  "kalmanR",
  "kalmanMinPoints",
] as const satisfies readonly (keyof PlannerSettings)[];

/** The three series predictors a Planner with these settings builds (`ai-dynamo/dynamo@8504b50:components/src/dynamo/planner/plugins/builtins/local_planner.py`). */
export function seriesPredictorsOf(s: PlannerSettings): SeriesPredictors {
  return new SeriesPredictors(s.loadPredictor, {
    log1p: s.loadPredictorLog1p,
    prophetWindowSize: s.prophetWindowSize,
    intervalS: s.throughputAdjustmentIntervalS,
    kalmanQLevel: s.kalmanQLevel,
    kalmanQTrend: s.kalmanQTrend,
    kalmanR: s.kalmanR,
    kalmanMinPoints: s.kalmanMinPoints,
  });
}

/** Keeps only the roles whose target differs from the ready count; null when nothing changes. */
function changed(
  decision: ScalingDecision | null,
  current: { prefill: number | null; decode: number },
): ScalingDecision | null {
  if (decision === null) return null;
  const p =
    decision.numPrefill !== null && decision.numPrefill !== current.prefill ? decision.numPrefill : null;
  const d = decision.numDecode !== null && decision.numDecode !== current.decode ? decision.numDecode : null;
  return p === null && d === null ? null : { numPrefill: p, numDecode: d };
}

/**
 * A tick's `scale_to` as the reference writes it. Its disaggregated load decision is merged onto
 * the ready counts before it is emitted (`dynamo.planner` `_project_scale_to`: "type_aware_merge
 * fills omitted roles from the ready-count baseline"), so a decision that changes one role also
 * names the other at its ready count. fleetsim's Planner leaves the unchanged role out
 * (`PlannerEffects.scaleTo`, which the replay applies); this is the same decision in the
 * reference's form, for the tick record. A role below one ready worker is left out, as the
 * reference drops such echoes when it repairs a role's floor.
 */
export function reportedScaleTo(
  scaleTo: ScalingDecision | null,
  workers: WorkerCounts,
  mode: PlannerSettings["mode"],
): ScalingDecision | null {
  if (scaleTo === null || mode !== "disagg") return scaleTo;
  const echo = (target: number | null, ready: number | null): number | null =>
    target !== null ? target : ready !== null && ready >= 1 ? ready : null;
  return {
    numPrefill: echo(scaleTo.numPrefill, workers.readyPrefill),
    numDecode: echo(scaleTo.numDecode, workers.readyDecode),
  };
}
