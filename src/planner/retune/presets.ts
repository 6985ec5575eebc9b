/**
 * The preset tables retune searches (`ai-dynamo/dynamo@9a57231:components/src/dynamo/planner/simulation/presets.py`,
 * `ai-dynamo/dynamo@9f3266c:components/src/dynamo/planner/simulation/load_predictor.py` `LOAD_PREDICTOR_PRESETS`). The knobs they set are rows of knobs/planner.ts; the default domains
 * of single knobs are in those rows.
 */
import type { RetunePresetGroup } from "../../knobs/planner.js";
import type { LoadPredictorCandidate, RetunePlannerPoint } from "../types.js";

/** A named value of a preset group. */
export interface Preset<P> {
  readonly name: string;
  readonly value: P;
}

/** `load_sensitivity` presets: (sensitivity, min_observations). */
export const LOAD_SENSITIVITY_PRESETS: readonly Preset<RetunePlannerPoint>[] = [
  { name: "aggressive", value: { loadScalingDownSensitivity: 70, loadMinObservations: 3 } },
  { name: "default", value: { loadScalingDownSensitivity: 80, loadMinObservations: 5 } },
  { name: "conservative", value: { loadScalingDownSensitivity: 90, loadMinObservations: 8 } },
];

/** `fpm_sampling` presets: (max_num_fpm_samples, fpm_sample_bucket_size). */
export const FPM_SAMPLING_PRESETS: readonly Preset<RetunePlannerPoint>[] = [
  { name: "small", value: { maxNumFpmSamples: 32, fpmSampleBucketSize: 4 } },
  { name: "default", value: { maxNumFpmSamples: 64, fpmSampleBucketSize: 16 } },
  { name: "large", value: { maxNumFpmSamples: 128, fpmSampleBucketSize: 16 } },
  { name: "fine", value: { maxNumFpmSamples: 128, fpmSampleBucketSize: 64 } },
];

/** Each preset group's presets, in table order. */
export const RETUNE_PRESETS: Readonly<Record<RetunePresetGroup, readonly Preset<RetunePlannerPoint>[]>> = {
  load_sensitivity: LOAD_SENSITIVITY_PRESETS,
  fpm_sampling: FPM_SAMPLING_PRESETS,
};

const KALMAN_DEFAULT = { kalmanQLevel: 1.0, kalmanQTrend: 0.1, kalmanR: 10.0, kalmanMinPoints: 5 } as const;
const KALMAN_REACTIVE = { kalmanQLevel: 10.0, kalmanQTrend: 1.0, kalmanR: 5.0, kalmanMinPoints: 3 } as const;

/** The 11 load-predictor presets of the pre-sweep, in table order (`ai-dynamo/dynamo@9f3266c:components/src/dynamo/planner/simulation/load_predictor.py`). */
export const LOAD_PREDICTOR_PRESETS: readonly Preset<LoadPredictorCandidate>[] = (
  [
    ["constant_last", { loadPredictor: "constant", loadPredictorLog1p: false }],
    ["arima_raw", { loadPredictor: "arima", loadPredictorLog1p: false }],
    ["arima_log1p", { loadPredictor: "arima", loadPredictorLog1p: true }],
    ["prophet_w20_raw", { loadPredictor: "prophet", loadPredictorLog1p: false, prophetWindowSize: 20 }],
    ["prophet_w20_log1p", { loadPredictor: "prophet", loadPredictorLog1p: true, prophetWindowSize: 20 }],
    ["prophet_w50_raw", { loadPredictor: "prophet", loadPredictorLog1p: false, prophetWindowSize: 50 }],
    ["prophet_w50_log1p", { loadPredictor: "prophet", loadPredictorLog1p: true, prophetWindowSize: 50 }],
    ["kalman_default_raw", { loadPredictor: "kalman", loadPredictorLog1p: false, ...KALMAN_DEFAULT }],
    ["kalman_default_log1p", { loadPredictor: "kalman", loadPredictorLog1p: true, ...KALMAN_DEFAULT }],
    ["kalman_reactive_raw", { loadPredictor: "kalman", loadPredictorLog1p: false, ...KALMAN_REACTIVE }],
    ["kalman_reactive_log1p", { loadPredictor: "kalman", loadPredictorLog1p: true, ...KALMAN_REACTIVE }],
  ] as const
).map(([name, fields]) => ({ name, value: { name, fields } }));
