import { advanceLoad } from "./loadScaling.js";
import {
  AggRegressionModel,
  DecodeRegressionModel,
  PrefillRegressionModel,
  type QueryPerfModel,
  regressionOptions,
} from "./perfModel.js";
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
} from "./types.js";

/** Which builtin loops a tick runs (planner.md §2 `ScheduledTick`). */
export interface ScheduledTick {
  readonly atS: number;
  readonly runLoadScaling: boolean;
  readonly runThroughputScaling: boolean;
  /** The throughput loop consumes the traffic window merged since its previous run. */
  readonly needTrafficMetrics: boolean;
}

export interface PlannerCoreInit {
  readonly settings: PlannerSettings;
  /** `prefill` is null in an aggregated deployment (its pool lives under `decode`). */
  readonly caps: { readonly prefill: EngineCapabilities | null; readonly decode: EngineCapabilities };
  /** Synthetic benchmark FPMs installed into the SLA perf models before the first tick (planner.md §8.5). */
  readonly bootstrap: {
    readonly prefill: readonly ForwardPassMetrics[];
    readonly decode: readonly ForwardPassMetrics[];
  } | null;
  /** Trace windows that pre-warm the load predictors (`load_predictor_warmup_trace`). */
  readonly warmup: readonly WarmupWindow[] | null;
}

const INTERVAL_TOLERANCE = 1e-9;

function isMultiple(t: number, interval: number): boolean {
  const k = t / interval;
  return Math.abs(k - Math.round(k)) <= INTERVAL_TOLERANCE * Math.max(1, Math.abs(k));
}

/**
 * The Planner's decision pipeline for one deployment (planner.md §0): every `scale_interval` a
 * tick runs the builtin loops that are due — the throughput loop (predict the next window's
 * load, size replicas from per-engine capacity under the SLA; with load scaling on it only sets
 * lower bounds) every `throughput_adjustment_interval`, then the load loop (±1 from forward-pass
 * metrics against thresholds or the SLA perf model) every `load_adjustment_interval`. Shared
 * cross-tick state: perf models, predictors, throughput lower bounds (1/1 initially), last KV-hit
 * rate and accept length.
 */
export class PlannerCore {
  readonly settings: PlannerSettings;
  private readonly caps: PlannerCoreInit["caps"];
  private readonly perf: { prefill: QueryPerfModel | null; decode: QueryPerfModel | null };
  private readonly predictors: SeriesPredictors | null;
  private lowerBound: { prefill: number | null; decode: number | null } = { prefill: 1, decode: 1 };
  private lastKvHitRate: number | null = null;
  private lastAcceptLength: number | null = null;

  constructor(init: PlannerCoreInit) {
    const s = init.settings;
    this.settings = s;
    this.caps = init.caps;
    const sla = s.optimizationTarget === "sla";
    const opts = regressionOptions(s);
    const boot = init.bootstrap;
    if (!sla) {
      this.perf = { prefill: null, decode: null };
    } else if (s.mode === "agg") {
      const model = new AggRegressionModel(opts);
      // Aggregated: prefill and decode benchmark points go into the one model (planner.md §8.5).
      if (boot !== null) model.loadBenchmarkFpms([...boot.prefill, ...boot.decode]);
      this.perf = { prefill: null, decode: model };
    } else {
      const prefill = new PrefillRegressionModel(opts);
      const decode = new DecodeRegressionModel(opts);
      if (boot !== null) {
        prefill.loadBenchmarkFpms(boot.prefill);
        decode.loadBenchmarkFpms(boot.decode);
      }
      this.perf = { prefill, decode };
    }
    this.predictors = s.enableThroughputScaling
      ? new SeriesPredictors(s.loadPredictor, {
          log1p: s.loadPredictorLog1p,
          prophetWindowSize: s.prophetWindowSize,
          intervalS: s.throughputAdjustmentIntervalS,
          kalmanQLevel: s.kalmanQLevel,
          kalmanQTrend: s.kalmanQTrend,
          kalmanR: s.kalmanR,
          kalmanMinPoints: s.kalmanMinPoints,
        })
      : null;
    if (this.predictors !== null && init.warmup !== null) this.predictors.warm(init.warmup);
  }

  /** The first tick is one scale interval after the start (planner.md §8.1). */
  initialTickS(startS: number): number {
    return startS + this.settings.scaleIntervalS;
  }

  /** Which loops run at `atS`. */
  schedule(atS: number): ScheduledTick {
    const s = this.settings;
    const runLoad = s.enableLoadScaling && isMultiple(atS, s.loadAdjustmentIntervalS);
    const runThroughput = s.enableThroughputScaling && isMultiple(atS, s.throughputAdjustmentIntervalS);
    return {
      atS,
      runLoadScaling: runLoad,
      runThroughputScaling: runThroughput,
      needTrafficMetrics: runThroughput,
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
    }
    return { scaleTo: changed(decision, current), nextTickS: input.nowS + s.scaleIntervalS, diagnostics };
  }

  private observeFpm(input: TickInput): void {
    if (this.perf.prefill !== null && input.fpmPrefill !== null) {
      for (const f of input.fpmPrefill) this.perf.prefill.addObservation(f);
    }
    if (this.perf.decode !== null && input.fpmDecode !== null) {
      for (const f of input.fpmDecode) this.perf.decode.addObservation(f);
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
