/** Load predictors of the Dynamo Planner's throughput loop (planner.md §4.1, §4.2); see docs/predictors.md. */
export { type ArimaMode, ArimaPredictor } from "./arima.js";
export { ConstantPredictor } from "./constant.js";
export { createPredictor } from "./create.js";
export { KalmanPredictor } from "./kalman.js";
export { ProphetPredictor } from "./prophet.js";
export { type LoadForecast, SeriesPredictors, type TrafficSample, type WarmupWindow } from "./series.js";
export type { LoadPredictor, PredictorOptions } from "./types.js";
