import { type ArimaFit, autoArima, forecastArima, refitArima } from "./arimaModel.js";
import { IdleGate } from "./idleGate.js";
import type { LoadPredictor } from "./types.js";

export type ArimaMode = "raw" | "log1p";

/**
 * Auto-ARIMA predictor (`ai-dynamo/dynamo@260b6ae:components/src/dynamo/planner/core/load/predictors.py` `ARIMAPredictor`): last value below 5 points, the common value
 * of an all-equal buffer, otherwise a model whose order is selected once (first forecast) and whose
 * parameters are re-estimated on the whole buffer whenever new points arrived (pmdarima's `update`
 * keeps the order too). A raw-mode selection of p = q = 0 switches to modelling log1p(y) for good.
 * Any failure falls back to the last value.
 */
export class ArimaPredictor implements LoadPredictor {
  readonly minimumDataPoints = 5;
  private readonly gate = new IdleGate();
  private readonly requestedMode: ArimaMode;
  private currentMode: ArimaMode;
  /** Buffered values clamped at 0, in the original scale; the model space is derived on demand. */
  private readonly raw: number[] = [];
  private model: ArimaFit | null = null;
  private stale = false;

  constructor(opts: { readonly log1p: boolean }) {
    this.requestedMode = opts.log1p ? "log1p" : "raw";
    this.currentMode = this.requestedMode;
  }

  /** Space the model works in (switches to "log1p" after a raw p = q = 0 selection). */
  get mode(): ArimaMode {
    return this.currentMode;
  }

  /** The selected model, or null before the first fit; for diagnostics and tests. */
  get fit(): ArimaFit | null {
    return this.model;
  }

  addDataPoint(value: number): void {
    const v = this.gate.admit(value);
    if (v === null) return;
    this.raw.push(Math.max(0, v));
    this.stale = true;
  }

  predictNext(): number {
    const raw = this.raw;
    if (raw.length < this.minimumDataPoints) return this.getLastValue();
    // Upstream short-circuits constant data (pmdarima would forecast 0 for it).
    if (raw.every((v) => v === raw[0])) return raw[0];
    try {
      if (this.model === null) this.selectModel();
      else if (this.stale) this.model = refitArima(this.series(), this.model);
      this.stale = false;
      const model = this.model;
      if (model === null) return this.getLastValue();
      const f = forecastArima(this.series(), model);
      return this.currentMode === "log1p" ? Math.max(0, Math.expm1(f)) : Math.max(0, f);
    } catch {
      this.stale = false;
      return this.getLastValue();
    }
  }

  getLastValue(): number {
    return this.raw.length > 0 ? this.raw[this.raw.length - 1] : 0;
  }

  resetIdleSkip(): void {
    this.gate.reset();
  }

  private series(): number[] {
    return this.currentMode === "log1p" ? this.raw.map(Math.log1p) : this.raw.slice();
  }

  private selectModel(): void {
    this.currentMode = this.requestedMode;
    const model = autoArima(this.series());
    this.model = model;
    if (model.p === 0 && model.q === 0 && this.requestedMode === "raw") {
      // A random-walk/white-noise selection on spiky raw counts: upstream retries on log1p(y).
      try {
        const logModel = autoArima(this.raw.map(Math.log1p));
        this.model = logModel;
        this.currentMode = "log1p";
      } catch {
        this.currentMode = "raw";
      }
    }
  }
}
