import { type KnobRow, type KnobSettings, PLANNER_KNOBS } from "../../src/knobs/planner.js";
import {
  AggRegressionModel,
  DecodeRegressionModel,
  type RegressionOptions,
} from "../../src/planner/perfModel/index.js";
import {
  type EngineCapabilities,
  type ForwardPassMetrics,
  forwardPassMetrics,
  type PlannerSettings,
  type WorkerCounts,
} from "../../src/planner/types.js";

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
export function fittedDecodeModel(workerId = 0): DecodeRegressionModel {
  const m = new DecodeRegressionModel(REGRESSION_OPTS);
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

/**
 * An aggregated model fitted to wall = 0.001 + 1e-5·prefill + 1e-6·decode_kv; avg_isl 1000,
 * avg_decode_length 200, prefill mix 1500 / 1.5.
 */
export function fittedAggModel(workerId = 0, opts: RegressionOptions = REGRESSION_OPTS): AggRegressionModel {
  const m = new AggRegressionModel(opts);
  for (const [p, pr, d, dr] of [
    [1000, 1, 4000, 20],
    [2000, 2, 8000, 40],
    [3000, 3, 2000, 10],
    [0, 0, 6000, 30],
  ]) {
    m.addObservation(
      forwardPass(workerId, {
        sumPrefillTokens: p,
        numPrefillRequests: pr,
        sumDecodeKvTokens: d,
        numDecodeRequests: dr,
        wallTimeS: 0.001 + 1e-5 * p + 1e-6 * d,
      }),
    );
  }
  return m;
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
