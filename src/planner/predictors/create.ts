import type { LoadPredictorKind } from "../types.js";
import { ArimaPredictor } from "./arima.js";
import { ConstantPredictor } from "./constant.js";
import { KalmanPredictor } from "./kalman.js";
import { ProphetPredictor } from "./prophet.js";
import type { LoadPredictor, PredictorOptions } from "./types.js";

/** `LOAD_PREDICTORS[kind](config)`: a fresh predictor for one series. */
export function createPredictor(kind: LoadPredictorKind, opts: PredictorOptions): LoadPredictor {
  switch (kind) {
    case "constant":
      return new ConstantPredictor();
    case "arima":
      return new ArimaPredictor(opts);
    case "prophet":
      return new ProphetPredictor(opts);
    case "kalman":
      return new KalmanPredictor(opts);
  }
}
