/** Load predictors of the Dynamo Planner's throughput loop (`ai-dynamo/dynamo@8504b50:components/src/dynamo/planner/plugins/builtins/local_planner.py`, `ai-dynamo/dynamo@260b6ae:components/src/dynamo/planner/core/load/predictors.py`); see docs/predictors.md. */
export { type ArimaMode, ArimaPredictor } from "./arima.js";
export { ConstantPredictor } from "./constant.js";
export { createPredictor } from "./create.js";
export { KalmanPredictor } from "./kalman.js";
export { ProphetPredictor } from "./prophet.js";
export { type LoadForecast, SeriesPredictors, type TrafficSample, type WarmupWindow } from "./series.js";
export type { LoadPredictor, PredictorOptions } from "./types.js";
