import { IdleGate } from "./idleGate.js";
import type { LoadPredictor, PredictorOptions } from "./types.js";

/**
 * Local-linear-trend Kalman filter (`ai-dynamo/dynamo@260b6ae:components/src/dynamo/planner/core/load/predictors.py`, filterpy `KalmanFilter(dim_x=2, dim_z=1)`):
 * state [level, trend], F = [[1,1],[0,1]], H = [1,0], P0 = 1000·I, Joseph-form update.
 * The 2×2 algebra is written out; a symmetric P is stored as its three distinct entries.
 *
 * Upstream semantics kept on purpose (`ai-dynamo/dynamo@260b6ae:components/src/dynamo/planner/core/load/predictors.py`): `kalmanMinPoints` only sets `minimumDataPoints` (forecasts
 * start after the first point) and the raw-mode forecast is not clamped at 0.
 */
export class KalmanPredictor implements LoadPredictor {
  readonly minimumDataPoints: number;
  private readonly gate = new IdleGate();
  private readonly log1p: boolean;
  private readonly qLevel: number;
  private readonly qTrend: number;
  private readonly r: number;
  private last: number | null = null;
  private initialized = false;
  // State x = [level, trend] and covariance P = [[p00, p01], [p01, p11]].
  private level = 0;
  private trend = 0;
  private p00 = 1000;
  private p01 = 0;
  private p11 = 1000;
  // A forecast made this interval already advanced the filter: the next observation must not predict again.
  private hasCachedPred = false;
  private cachedPred = 0;

  constructor(
    opts: Pick<PredictorOptions, "log1p" | "kalmanQLevel" | "kalmanQTrend" | "kalmanR" | "kalmanMinPoints">,
  ) {
    this.minimumDataPoints = opts.kalmanMinPoints;
    this.log1p = opts.log1p;
    this.qLevel = Math.max(1e-12, opts.kalmanQLevel);
    this.qTrend = Math.max(1e-12, opts.kalmanQTrend);
    this.r = Math.max(1e-9, opts.kalmanR);
  }

  addDataPoint(value: number): void {
    const v = this.gate.admit(value);
    // Upstream returns before touching the forecast cache when a point is skipped.
    if (v === null) return;
    this.last = v;
    const z = this.log1p ? Math.log1p(Math.max(0, v)) : v;
    if (!this.initialized) {
      // The first observation seeds the level without an update step.
      this.level = z;
      this.trend = 0;
      this.initialized = true;
    } else {
      if (!this.hasCachedPred) this.predictStep();
      this.updateStep(z);
    }
    this.hasCachedPred = false;
  }

  predictNext(): number {
    if (!this.initialized) return this.getLastValue();
    if (!this.hasCachedPred) {
      this.predictStep();
      this.cachedPred = this.level;
      this.hasCachedPred = true;
    }
    return this.log1p ? Math.max(0, Math.expm1(this.cachedPred)) : this.cachedPred;
  }

  getLastValue(): number {
    return this.last ?? 0;
  }

  resetIdleSkip(): void {
    this.gate.reset();
  }

  /** Current filter state, for diagnostics and tests. */
  state(): { level: number; trend: number; p: [number, number, number] } {
    return { level: this.level, trend: this.trend, p: [this.p00, this.p01, this.p11] };
  }

  /** x = F x; P = F P Fᵀ + Q. */
  private predictStep(): void {
    this.level += this.trend;
    const { p00, p01, p11 } = this;
    this.p00 = p00 + 2 * p01 + p11 + this.qLevel;
    this.p01 = p01 + p11;
    this.p11 = p11 + this.qTrend;
  }

  /** K = P Hᵀ / S; x += K·(z − level); P = (I − K H) P (I − K H)ᵀ + K R Kᵀ (Joseph form, as filterpy). */
  private updateStep(z: number): void {
    const { p00, p01, p11, r } = this;
    const s = p00 + r;
    const k0 = p00 / s;
    const k1 = p01 / s;
    const innovation = z - this.level;
    this.level += k0 * innovation;
    this.trend += k1 * innovation;
    // With A = I − K H = [[1−k0, 0], [−k1, 1]]: A P Aᵀ + K R Kᵀ, expanded.
    const a = 1 - k0;
    this.p00 = a * a * p00 + k0 * k0 * r;
    this.p01 = a * (p01 - k1 * p00) + k0 * k1 * r;
    this.p11 = p11 - 2 * k1 * p01 + k1 * k1 * p00 + k1 * k1 * r;
  }
}
