/**
 * The preset tables retune searches (planner.md §9.2 `simulation/presets.py`, §9.3
 * `LOAD_PREDICTOR_PRESETS`), and the default domains of the knobs (aisimulate.md §2.3–§2.4).
 */
import type { LoadPredictorCandidate, RetunePlannerPoint } from "../planner/types.js";
import type { Preset } from "./schemaRetuneDomains.js";

/** Default domains of the KV-router knobs (the recommend defaults, aisimulate.md §2.3). */
export const ROUTER_DEFAULT_DOMAINS = {
  overlap_score_credit: [0.0, 0.5, 1.0],
  prefill_load_scale: [0, 0.25, 0.5, 1, 2, 4, 8, 16, 32],
  temperature: [0.0, 0.2, 0.5, 1.0],
} as const;

/** Default domains of the Planner knobs (the recommend independent grids, planner.md §9.2). */
export const PLANNER_DEFAULT_DOMAINS = {
  load_scaling_down_sensitivity: [70, 80, 90],
  load_min_observations: [3, 5, 8],
  max_num_fpm_samples: [32, 64, 128],
  fpm_sample_bucket_size: [4, 16, 64],
} as const;

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

const KALMAN_DEFAULT = { kalmanQLevel: 1.0, kalmanQTrend: 0.1, kalmanR: 10.0, kalmanMinPoints: 5 } as const;
const KALMAN_REACTIVE = { kalmanQLevel: 10.0, kalmanQTrend: 1.0, kalmanR: 5.0, kalmanMinPoints: 3 } as const;

/** The 11 load-predictor presets of the pre-sweep, in table order (planner.md §9.3). */
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
