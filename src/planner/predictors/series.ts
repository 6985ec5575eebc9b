import type { LoadPredictorKind } from "../types.js";
import { createPredictor } from "./create.js";
import type { LoadPredictor, PredictorOptions } from "./types.js";

/** One interval's offered load and request shape (a `TrafficObservation` fits). */
export interface TrafficSample {
  readonly numReq: number;
  readonly isl: number;
  readonly osl: number;
}

export interface LoadForecast {
  readonly numReq: number;
  readonly isl: number;
  readonly osl: number;
}

/** The shape of a warm-up window from `extractMetricsFromMooncake`. */
export interface WarmupWindow {
  readonly numReq: number;
  readonly avgIsl: number;
  readonly avgOsl: number;
}

/**
 * The three series predictors of `BuiltinLoadPredict` (`ai-dynamo/dynamo@8504b50:components/src/dynamo/planner/plugins/builtins/local_planner.py`): request count, ISL and OSL,
 * with its idle-window rules. KV-hit rate and accept length are not predicted (last value, kept by
 * the caller).
 */
export class SeriesPredictors {
  readonly kind: LoadPredictorKind;
  readonly numReq: LoadPredictor;
  readonly isl: LoadPredictor;
  readonly osl: LoadPredictor;
  private lastIsl: number | null = null;
  private lastOsl: number | null = null;
  private seenLiveTraffic = false;
  /** The forecast reused for identical idle windows once it reached zero demand. */
  private quiescent: LoadForecast | null = null;

  constructor(kind: LoadPredictorKind, opts: PredictorOptions) {
    this.kind = kind;
    this.numReq = createPredictor(kind, opts);
    this.isl = createPredictor(kind, opts);
    this.osl = createPredictor(kind, opts);
  }

  /**
   * Feeds one interval. In an idle window after live traffic, average lengths are undefined, so
   * the last observed shape is carried forward: time-based predictors still advance once per
   * interval without learning zero lengths. Non-finite lengths are not fed at all.
   */
  observe(sample: TrafficSample): void {
    this.numReq.addDataPoint(sample.numReq);
    if (sample.numReq > 0) {
      this.seenLiveTraffic = true;
      if (Number.isFinite(sample.isl)) this.lastIsl = sample.isl;
      if (Number.isFinite(sample.osl)) this.lastOsl = sample.osl;
    }
    let isl = sample.isl;
    let osl = sample.osl;
    if (sample.numReq === 0 && this.seenLiveTraffic) {
      isl = this.lastIsl ?? 0;
      osl = this.lastOsl ?? 0;
    }
    if (Number.isFinite(isl)) this.isl.addDataPoint(isl);
    if (Number.isFinite(osl)) this.osl.addDataPoint(osl);
  }

  /** Pre-warms from a trace's windows, then re-arms leading-zero skipping for live traffic. */
  warm(windows: Iterable<WarmupWindow>): void {
    for (const w of windows) this.observe({ numReq: w.numReq, isl: w.avgIsl, osl: w.avgOsl });
    this.numReq.resetIdleSkip();
    this.isl.resetIdleSkip();
    this.osl.resetIdleSkip();
    this.seenLiveTraffic = false;
    this.quiescent = null;
  }

  /** One-step forecasts of the three series. May throw (upstream reports `predict_failed`). */
  predict(): LoadForecast {
    return { numReq: this.numReq.predictNext(), isl: this.isl.predictNext(), osl: this.osl.predictNext() };
  }

  /**
   * The PREDICT stage for one traffic window: observe, then forecast; null means `predict_failed`.
   * Once a constant/Prophet forecast reached zero demand during idle, identical idle windows reuse it
   * (Prophet still records them to keep its window and time axis); ARIMA and Kalman carry incremental
   * state, so they keep observing and forecasting every interval.
   */
  observeAndPredict(sample: TrafficSample): LoadForecast | null {
    let forecast: LoadForecast;
    if (sample.numReq === 0 && this.quiescent !== null) {
      if (this.kind === "prophet") this.observe(sample);
      forecast = this.quiescent;
    } else {
      this.observe(sample);
      try {
        forecast = this.predict();
      } catch {
        this.quiescent = null;
        return null;
      }
    }
    if (
      sample.numReq === 0 &&
      this.seenLiveTraffic &&
      forecast.numReq <= 0 &&
      (this.kind === "constant" || this.kind === "prophet")
    ) {
      this.quiescent = forecast;
    } else if (sample.numReq > 0) {
      this.quiescent = null;
    }
    return forecast;
  }
}
