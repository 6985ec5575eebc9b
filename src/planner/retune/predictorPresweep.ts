/**
 * The load-predictor pre-sweep (docs/retune.md §6, seed 003 "Load-Predictor Pre-Sweep",
 * `ai-dynamo/dynamo@9f3266c:components/src/dynamo/planner/simulation/load_predictor.py`). Each candidate runs the Planner's own three series predictors (`SeriesPredictors`) over the
 * buckets of the history and the window, oldest first: it observes every bucket, and before observing
 * a scored bucket forecasts it one step ahead (three forecasts). Per scored bucket
 *
 *   L = 0.4·e(n̂·î, n·isl) + 0.4·e(n̂·ô, n·osl) + 0.1·e(î, isl) + 0.1·e(ô, osl),
 *   e(a, b) = |log1p(max(a, 0)) − log1p(max(b, 0))|,
 *
 * and the candidate's loss is the mean. A bucket is scored when it is a window bucket (the last
 * `evalSteps`) and, counting from the first bucket with traffic (leading empty buckets are no
 * observation, as in `extractMetricsFromMooncake`), its position is at least the warm-up
 * max(minimumDataPoints) over the candidates — so with a long history every window bucket counts, and
 * without one the first window buckets only warm the predictors. The lowest loss wins, the earliest
 * candidate on ties (first strict minimum); a candidate whose forecast throws or is not finite has no
 * loss and cannot win; with no finite loss there is no winner and the current predictor stays.
 */
import { createPredictor } from "../predictors/create.js";
import { type LoadForecast, SeriesPredictors, type WarmupWindow } from "../predictors/series.js";
import type { PredictorOptions } from "../predictors/types.js";
import type { LoadPredictorCandidate, LoadPredictorFields, PlannerSettings } from "../types.js";
import { leadingEmptyBuckets } from "./buckets.js";
import { type LiveValue, livePredictorFields } from "./points.js";
import { LOAD_PREDICTOR_PRESETS } from "./presets.js";

/** The 11 presets in canonical order (`ai-dynamo/dynamo@9f3266c:components/src/dynamo/planner/simulation/load_predictor.py`): `constant_last` … `kalman_reactive_log1p`. */
export const LOAD_PREDICTOR_CANDIDATES: readonly LoadPredictorCandidate[] = LOAD_PREDICTOR_PRESETS.map(
  (p) => p.value,
);

/** What a candidate's fields do not set: the throughput interval (Prophet's time axis) and other knobs. */
export type PredictorBase = Pick<
  PlannerSettings,
  | "throughputAdjustmentIntervalS"
  | "prophetWindowSize"
  | "kalmanQLevel"
  | "kalmanQTrend"
  | "kalmanR"
  | "kalmanMinPoints"
>;

export function predictorOptions(fields: LoadPredictorFields, base: PredictorBase): PredictorOptions {
  return {
    log1p: fields.loadPredictorLog1p,
    prophetWindowSize: fields.prophetWindowSize ?? base.prophetWindowSize,
    intervalS: base.throughputAdjustmentIntervalS,
    kalmanQLevel: fields.kalmanQLevel ?? base.kalmanQLevel,
    kalmanQTrend: fields.kalmanQTrend ?? base.kalmanQTrend,
    kalmanR: fields.kalmanR ?? base.kalmanR,
    kalmanMinPoints: fields.kalmanMinPoints ?? base.kalmanMinPoints,
  };
}

/** Observations a predictor needs before forecasting: constant 1, ARIMA 5, Prophet 5, Kalman `min_points`. */
export function minimumObservations(fields: LoadPredictorFields, base: PredictorBase): number {
  return createPredictor(fields.loadPredictor, predictorOptions(fields, base)).minimumDataPoints;
}

/** e(a, b) of the loss. */
export function logError(a: number, b: number): number {
  return Math.abs(Math.log1p(Math.max(a, 0)) - Math.log1p(Math.max(b, 0)));
}

/** The weighted loss of one forecast against one bucket. */
export function bucketLoss(f: LoadForecast, w: WarmupWindow): number {
  return (
    0.4 * logError(f.numReq * f.isl, w.numReq * w.avgIsl) +
    0.4 * logError(f.numReq * f.osl, w.numReq * w.avgOsl) +
    0.1 * logError(f.isl, w.avgIsl) +
    0.1 * logError(f.osl, w.avgOsl)
  );
}

export interface CandidateLoss {
  readonly name: string;
  /** Mean loss; null when the candidate cannot win (a forecast failed, or nothing was scored). */
  readonly loss: number | null;
  readonly error: string | null;
}

export interface PresweepResult {
  readonly winner: LoadPredictorCandidate | null;
  /** Per candidate, in candidate order. */
  readonly losses: readonly CandidateLoss[];
  /** Window buckets (⌈T / throughput interval⌉). */
  readonly evalSteps: number;
  /** History buckets observed before the window (leading empty buckets excluded). */
  readonly warmupSteps: number;
  /** Buckets actually scored (window buckets past the warm-up). */
  readonly scoredSteps: number;
}

function evaluate(
  candidate: LoadPredictorCandidate,
  base: PredictorBase,
  buckets: readonly WarmupWindow[],
  isScored: (i: number) => boolean,
): CandidateLoss {
  const { name, fields } = candidate;
  const series = new SeriesPredictors(fields.loadPredictor, predictorOptions(fields, base));
  let sum = 0;
  let n = 0;
  for (let i = 0; i < buckets.length; i++) {
    const w = buckets[i];
    if (isScored(i)) {
      let f: LoadForecast;
      try {
        f = series.predict();
      } catch (err) {
        return { name, loss: null, error: err instanceof Error ? err.message : String(err) };
      }
      if (![f.numReq, f.isl, f.osl].every(Number.isFinite)) {
        return { name, loss: null, error: "non-finite forecast" };
      }
      sum += bucketLoss(f, w);
      n++;
    }
    series.observe({ numReq: w.numReq, isl: w.avgIsl, osl: w.avgOsl });
  }
  return n > 0 ? { name, loss: sum / n, error: null } : { name, loss: null, error: "no scored bucket" };
}

/**
 * Runs the pre-sweep. `buckets`: history then window buckets, oldest first, the last `evalSteps` of
 * them the window's (see `bucketsEndingAt`).
 */
export function runPresweep(
  candidates: readonly LoadPredictorCandidate[],
  base: PredictorBase,
  buckets: readonly WarmupWindow[],
  evalSteps: number,
): PresweepResult {
  if (!(Number.isInteger(evalSteps) && evalSteps >= 0 && evalSteps <= buckets.length)) {
    throw new RangeError(`evalSteps must be an integer in [0, ${buckets.length}], got ${evalSteps}`);
  }
  const firstWindow = buckets.length - evalSteps;
  const leading = leadingEmptyBuckets(buckets);
  const warmup = Math.max(0, ...candidates.map((c) => minimumObservations(c.fields, base)));
  const isScored = (i: number): boolean => i >= firstWindow && i >= leading && i - leading >= warmup;
  let scoredSteps = 0;
  for (let i = 0; i < buckets.length; i++) if (isScored(i)) scoredSteps++;
  const losses = candidates.map((c) => evaluate(c, base, buckets, isScored));
  let best = -1;
  let bestLoss = Number.POSITIVE_INFINITY;
  for (let i = 0; i < losses.length; i++) {
    const loss = losses[i].loss;
    // Strictly lower only: the earliest candidate keeps a tie.
    if (loss !== null && (best < 0 || loss < bestLoss)) {
      best = i;
      bestLoss = loss;
    }
  }
  return {
    winner: best < 0 ? null : candidates[best],
    losses,
    evalSteps,
    warmupSteps: Math.max(0, firstWindow - leading),
    scoredSteps,
  };
}

/** `predictor_presweep` of a decision record (docs/retune.md §10). */
export interface PredictorPresweepRecord {
  readonly winner: string | null;
  /** The winner's predictor fields, live names; null without a winner. */
  readonly fields: Readonly<Record<string, LiveValue>> | null;
  /** Per candidate name; null = no finite loss. */
  readonly losses: Readonly<Record<string, number | null>>;
  readonly eval_steps: number;
  readonly warmup_steps: number;
  readonly wall_s: number;
}

/** The record of a pre-sweep that took `wallS` host seconds (measured by the caller). */
export function presweepRecord(result: PresweepResult, wallS: number): PredictorPresweepRecord {
  return {
    winner: result.winner?.name ?? null,
    fields: result.winner === null ? null : livePredictorFields(result.winner.fields),
    losses: Object.fromEntries(result.losses.map((l) => [l.name, l.loss])),
    eval_steps: result.evalSteps,
    warmup_steps: result.warmupSteps,
    wall_s: wallS,
  };
}
