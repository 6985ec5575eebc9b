import { type KnobRow, type KnobSettings, PLANNER_KNOBS } from "../../src/knobs/planner.js";
import {
  FpmRegressionModel,
  type QueryPerfModel,
  type RegressionOptions,
} from "../../src/planner/perfModel/index.js";
import {
  type EngineCapabilities,
  type ForwardPassMetrics,
  forwardPassMetrics,
  type PlannerSettings,
  type WorkerCounts,
} from "../../src/planner/types.js";
import type { WorkerRole } from "../../src/util/workerRole.js";

/**
 * Every knob's settings field at its table default: the base of the fixtures below, so a new row
 * of the knob table needs no edit here (the fixtures still pin the values their tests are about).
 */
export function knobDefaults(): KnobSettings {
  const out: Record<string, unknown> = {};
  for (const row of PLANNER_KNOBS as readonly KnobRow[])
    if (row.settings !== null) out[row.settings] = row.default;
  return out as KnobSettings;
}

/**
 * Planner test fixtures: fully specified objects with neutral defaults — every knob at its table
 * default, then a disaggregated, load-only deployment (constant predictor, no GPU budget) with
 * PlannerConfig's SLA targets and no load thresholds. Each test file overrides what its cases are
 * about.
 */
export function plannerSettings(over: Partial<PlannerSettings> = {}): PlannerSettings {
  return {
    ...knobDefaults(),
    mode: "disagg",
    enableThroughputScaling: false,
    enableLoadScaling: true,
    scaleIntervalS: 5,
    maxGpuBudget: -1,
    ttftMs: 500,
    itlMs: 50,
    prefillScaleUpQueueTokens: null,
    prefillScaleDownQueueTokens: null,
    decodeScaleUpKvRate: null,
    decodeScaleDownKvRate: null,
    loadPredictor: "constant",
    ...over,
  };
}

export function engineCaps(over: Partial<EngineCapabilities> = {}): EngineCapabilities {
  return {
    numGpu: 1,
    gpuCostPerReplica: 1,
    maxNumBatchedTokens: 2048,
    maxNumSeqs: 256,
    contextLength: 4096,
    maxKvTokens: 100_000,
    kvCacheBlockSize: 16,
    speculativeNextn: 0,
    attentionData: 1,
    ...over,
  };
}

/** An FPM with every counter 0 (an idle heartbeat unless `wallTimeS` is set). */
export function forwardPass(workerId: number, over: Partial<ForwardPassMetrics> = {}): ForwardPassMetrics {
  return forwardPassMetrics(workerId, over);
}

/** Ready workers per pool, no scaling in flight and no expected counts. */
export function workerCounts(
  p: number | null,
  d: number | null,
  over: Partial<WorkerCounts> = {},
): WorkerCounts {
  return {
    readyPrefill: p,
    readyDecode: d,
    expectedPrefill: null,
    expectedDecode: null,
    prefillScalingInProgress: false,
    decodeScalingInProgress: false,
    ...over,
  };
}

/** The regression models' options in the planner tests: 50 samples, 3 observations, 16 buckets. */
export const REGRESSION_OPTS: RegressionOptions = {
  maxNumFpmSamples: 50,
  minObservations: 3,
  bucketCount: 16,
};

/** A decode model fitted to wall = 5 ms + 1 µs per KV token + 0.1 ms per request (a 2-D plane). */
export function fittedDecodeModel(workerId = 0): FpmRegressionModel {
  const m = new FpmRegressionModel("decode", REGRESSION_OPTS);
  for (const [n, kv] of [
    [10, 10_000],
    [20, 10_000],
    [10, 30_000],
    [40, 20_000],
  ]) {
    m.addObservation(
      forwardPass(workerId, {
        numDecodeRequests: n,
        sumDecodeKvTokens: kv,
        wallTimeS: 0.005 + 1e-6 * kv + 1e-4 * n,
      }),
    );
  }
  return m;
}

/** A pass's price in a `PlanePerfModel`: seconds per unit of each load. */
export interface PassPlane {
  readonly intercept: number;
  readonly perPrefillToken?: number;
  readonly perDecodeRequest?: number;
  readonly perDecodeKvToken?: number;
}

/**
 * A perf model with a known price and known averages, for the load and capacity logic's tests
 * (the regression itself is tested on its own in perf.test.ts and against the reference's in
 * reference.regression.test.ts): a pass costs the plane's seconds, 0 when it schedules nothing.
 */
export class PlanePerfModel implements QueryPerfModel {
  readonly minObservations = 3;
  constructor(
    readonly workerType: WorkerRole,
    private readonly plane: PassPlane,
    private readonly averages: {
      readonly avgIsl?: number;
      readonly avgDecodeLength?: number;
      readonly avgPrefillTokens?: number;
      readonly avgNumPrefill?: number;
    } = {},
    private ready = true,
  ) {}
  get avgIsl(): number {
    return this.averages.avgIsl ?? 0;
  }
  get avgDecodeLength(): number {
    return this.averages.avgDecodeLength ?? 0;
  }
  get avgPrefillTokens(): number {
    return this.averages.avgPrefillTokens ?? 0;
  }
  get avgNumPrefill(): number {
    return this.averages.avgNumPrefill ?? 0;
  }
  addObservation(): void {}
  hasSufficientData(): boolean {
    return this.ready;
  }
  setReady(ready: boolean): void {
    this.ready = ready;
  }
  forwardPassS(
    prefillTokens: number,
    _prefillRequests: number,
    decodeRequests: number,
    decodeKvTokens: number,
  ) {
    if (!this.ready) return null;
    if (prefillTokens <= 0 && decodeRequests <= 0) return 0;
    const p = this.plane;
    return (
      p.intercept +
      (p.perPrefillToken ?? 0) * prefillTokens +
      (p.perDecodeRequest ?? 0) * decodeRequests +
      (p.perDecodeKvToken ?? 0) * decodeKvTokens
    );
  }
}

/**
 * An aggregated model pricing a pass at 0.001 + 1e-5·prefill + 1e-6·decode_kv s; avg_isl 1000,
 * avg_decode_length 200, prefill mix 1500 / 1.5.
 */
export function fittedAggModel(): PlanePerfModel {
  return new PlanePerfModel(
    "aggregated",
    { intercept: 0.001, perPrefillToken: 1e-5, perDecodeKvToken: 1e-6 },
    { avgIsl: 1000, avgDecodeLength: 200, avgPrefillTokens: 1500, avgNumPrefill: 1.5 },
  );
}

/** The 11 load predictor presets of `ai-dynamo/dynamo@9f3266c:components/src/dynamo/planner/simulation/load_predictor.py`, in canonical order. */
export const LOAD_PREDICTOR_PRESETS = [
  "constant_last",
  "arima_raw",
  "arima_log1p",
  "prophet_w20_raw",
  "prophet_w20_log1p",
  "prophet_w50_raw",
  "prophet_w50_log1p",
  "kalman_default_raw",
  "kalman_default_log1p",
  "kalman_reactive_raw",
  "kalman_reactive_log1p",
] as const;
