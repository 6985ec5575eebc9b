import { IdleGate } from "./idleGate.js";
import { prophetForecast } from "./prophetModel.js";
import type { LoadPredictor, PredictorOptions } from "./types.js";

/**
 * Prophet-style predictor (`ai-dynamo/dynamo@260b6ae:components/src/dynamo/planner/core/load/predictors.py` `ProphetPredictor`): keeps the last `prophetWindowSize`
 * points (log1p-transformed when enabled) on a time axis of one step per accepted point, refits from
 * scratch on every forecast and predicts the step after the last point; max(0, ·) in both modes.
 * Fewer than 5 points: last value. The model itself is in `prophetModel.ts`.
 */
export class ProphetPredictor implements LoadPredictor {
  readonly minimumDataPoints = 5;
  private readonly gate = new IdleGate();
  private readonly log1p: boolean;
  private readonly windowSize: number;
  private readonly intervalS: number;
  /** Window values in model space. */
  private window: number[] = [];
  /** Accepted points so far: the time-axis step the next point will get. */
  private step = 0;

  constructor(opts: Pick<PredictorOptions, "log1p" | "prophetWindowSize" | "intervalS">) {
    if (!(Number.isInteger(opts.prophetWindowSize) && opts.prophetWindowSize >= 1))
      throw new RangeError(`prophetWindowSize must be a positive integer, got ${opts.prophetWindowSize}`);
    if (!(opts.intervalS > 0)) throw new RangeError(`intervalS must be positive, got ${opts.intervalS}`);
    this.log1p = opts.log1p;
    this.windowSize = opts.prophetWindowSize;
    this.intervalS = opts.intervalS;
  }

  addDataPoint(value: number): void {
    const v = this.gate.admit(value);
    if (v === null) return;
    this.window.push(this.log1p ? Math.log1p(Math.max(0, v)) : v);
    this.step++;
    if (this.window.length > this.windowSize) this.window = this.window.slice(-this.windowSize);
  }

  predictNext(): number {
    if (this.window.length < this.minimumDataPoints) return this.getLastValue();
    const yhat = prophetForecast(this.window, this.step - this.window.length, this.intervalS);
    return this.log1p ? Math.max(0, Math.expm1(yhat)) : Math.max(0, yhat);
  }

  getLastValue(): number {
    if (this.window.length === 0) return 0;
    const y = this.window[this.window.length - 1];
    return this.log1p ? Math.max(0, Math.expm1(y)) : y;
  }

  resetIdleSkip(): void {
    this.gate.reset();
  }
}
