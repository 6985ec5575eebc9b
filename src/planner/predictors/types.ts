/** The load-predictor contract shared by the throughput loop and the AISimulate pre-sweep (planner.md §4.2). */

export interface LoadPredictor {
  /** Feeds one interval's value; non-finite counts as 0, leading zeros are skipped (§4.2). */
  addDataPoint(value: number): void;
  /** One-step-ahead forecast in the original scale. */
  predictNext(): number;
  /** Last buffered value in the original scale, or 0 when nothing is buffered. */
  getLastValue(): number;
  /** Skip leading zeros again until the next non-zero (called after warm-up, before live traffic). */
  resetIdleSkip(): void;
  /** Points the AISimulate pre-sweep waits for before scoring (§9.3); not a runtime gate. */
  readonly minimumDataPoints: number;
}

/** The seven predictor knobs of PlannerConfig (§1.1, §9.3 presets), in camelCase. */
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
