/** The load-predictor contract shared by the throughput loop and the AISimulate pre-sweep (`ai-dynamo/dynamo@260b6ae:components/src/dynamo/planner/core/load/predictors.py`). */

export interface LoadPredictor {
  /** Feeds one interval's value; non-finite counts as 0, leading zeros are skipped (`BasePredictor`). */
  addDataPoint(value: number): void;
  /** One-step-ahead forecast in the original scale. */
  predictNext(): number;
  /** Last buffered value in the original scale, or 0 when nothing is buffered. */
  getLastValue(): number;
  /** Skip leading zeros again until the next non-zero (called after warm-up, before live traffic). */
  resetIdleSkip(): void;
  /** Points the AISimulate pre-sweep waits for before scoring (`ai-dynamo/dynamo@9f3266c:components/src/dynamo/planner/simulation/load_predictor.py`); not a runtime gate. */
  readonly minimumDataPoints: number;
}

/** The seven predictor knobs of PlannerConfig (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`), in camelCase. */
export interface PredictorOptions {
  /** `load_predictor_log1p`: model log1p(y) and return expm1 of the forecast. */
  readonly log1p: boolean;
  /** `prophet_window_size`: points (not seconds) kept by the Prophet-style predictor. */
  readonly prophetWindowSize: number;
  /** `throughput_adjustment_interval_seconds`: spacing of the Prophet-style time axis. */
  readonly intervalS: number;
  readonly kalmanQLevel: number;
  readonly kalmanQTrend: number;
  readonly kalmanR: number;
  readonly kalmanMinPoints: number;
}
