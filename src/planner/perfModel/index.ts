/**
 * Legacy Dynamo perf-model regressions (`ai-dynamo/dynamo@439d645:components/src/dynamo/planner/core/perf_model/base.py`, `core/perf_model/{base,prefill,decode,agg}.py`):
 * forward-pass wall time learned online from FPMs by OLS with intercept. They stand in for the AIC wheel's
 * opaque observed-FPM regression, of which they are the best public description.
 */

import type { WorkerRole } from "../../util/workerRole.js";
import type { EnginePerfModel, ForwardPassMetrics } from "../types.js";
import { fitOls, type OlsFit } from "./ols.js";
import { BucketedSamples, MovingAverage, type Sample } from "./samples.js";

/**
 * What the load-scaling queries need from a perf model: forward-pass times plus the moving averages
 * used to synthesise the "next request" (`ai-dynamo/dynamo@0c11ddf:components/src/dynamo/planner/core/perf_model/engine_query.py` current query semantics).
 */
export interface QueryPerfModel extends EnginePerfModel {
  readonly workerType: WorkerRole;
  /** Mean scheduled prompt length per prefill request (0 when the role never prefills). */
  readonly avgIsl: number;
  /** Mean scheduled KV tokens per decode request (0 when the role never decodes). */
  readonly avgDecodeLength: number;
  /** Mean scheduled prefill tokens per pass: the typical prefill mix riding an agg decode pass. */
  readonly avgPrefillTokens: number;
  /** Mean scheduled prefill requests per pass. */
  readonly avgNumPrefill: number;
}

export interface RegressionOptions {
  /** `max_num_fpm_samples`: retained samples and moving-average window. */
  readonly maxNumFpmSamples: number;
  /** `load_min_observations`: readiness threshold. */
  readonly minObservations: number;
  /** `fpm_sample_bucket_size` (perfect square): 1-D buckets, or √ per axis in 2-D. */
  readonly bucketCount: number;
}

/** Predictions below this are floored: a forward pass never takes zero or negative time. */
export const MIN_PREDICTION_S = 1e-6;

/** Settings → regression options. */
export function regressionOptions(s: {
  readonly maxNumFpmSamples: number;
  readonly loadMinObservations: number;
  readonly fpmSampleBucketSize: number;
}): RegressionOptions {
  return {
    maxNumFpmSamples: s.maxNumFpmSamples,
    minObservations: s.loadMinObservations,
    bucketCount: s.fpmSampleBucketSize,
  };
}

abstract class RegressionModel implements QueryPerfModel {
  abstract readonly workerType: WorkerRole;
  readonly minObservations: number;
  private readonly samples: BucketedSamples;
  /** undefined = stale (refit lazily on the next query); null = the last fit was rejected. */
  private fit: OlsFit | null | undefined = undefined;

  protected constructor(
    opts: RegressionOptions,
    private readonly dims: 1 | 2,
    /** Feature indices whose negative coefficient is clipped to 0 instead of rejecting the fit. */
    private readonly clippable: ReadonlySet<number>,
  ) {
    this.minObservations = opts.minObservations;
    const perAxis = dims === 1 ? opts.bucketCount : Math.floor(Math.sqrt(opts.bucketCount));
    this.samples = new BucketedSamples(dims, perAxis, opts.maxNumFpmSamples);
  }

  protected abstract features(fpm: ForwardPassMetrics): number[];
  protected abstract updateAverages(fpm: ForwardPassMetrics): void;
  abstract forwardPassS(
    prefillTokens: number,
    prefillRequests: number,
    decodeRequests: number,
    decodeKvTokens: number,
  ): number | null;

  get avgIsl(): number {
    return 0;
  }
  get avgDecodeLength(): number {
    return 0;
  }
  get avgPrefillTokens(): number {
    return 0;
  }
  get avgNumPrefill(): number {
    return 0;
  }

  /** Averages first (idle heartbeats still count there), then the sample unless it is a heartbeat. */
  addObservation(fpm: ForwardPassMetrics): void {
    this.updateAverages(fpm);
    if (fpm.wallTimeS === 0) return;
    this.samples.add(this.features(fpm), fpm.wallTimeS);
    this.fit = undefined;
  }

  /** Bootstrap from pre-deployment benchmark FPMs (same path as live samples). */
  loadBenchmarkFpms(fpms: readonly ForwardPassMetrics[]): void {
    for (const fpm of fpms) this.addObservation(fpm);
  }

  hasSufficientData(): boolean {
    return this.samples.size >= this.minObservations;
  }

  get numObservations(): number {
    return this.samples.size;
  }

  /** Retained samples in bucket order (diagnostics and tests). */
  retainedSamples(): readonly Sample[] {
    return this.samples.all();
  }

  /** The accepted fit (negative coefficients already clipped), or null when not ready. */
  coefficients(): OlsFit | null {
    if (this.fit === undefined) this.fit = this.refit();
    return this.fit;
  }

  protected predict(x: readonly number[]): number | null {
    const fit = this.coefficients();
    if (fit === null) return null;
    let y = fit.intercept;
    for (let k = 0; k < this.dims; k++) y += fit.coef[k] * x[k];
    return Math.max(MIN_PREDICTION_S, y);
  }

  /**
   * A negative coefficient says "more load, less time", which is physically impossible: reject the fit
   * (model not ready) unless the feature is clippable, whose coefficient only flips under
   * multicollinearity; that one is clipped to 0 and the intercept kept as fitted.
   */
  private refit(): OlsFit | null {
    const all = this.samples.all();
    if (all.length < this.minObservations) return null;
    const fit = fitOls(
      all.map((s) => s.x),
      all.map((s) => s.y),
      this.dims,
    );
    if (fit === null) return null;
    const coef = [...fit.coef];
    for (let k = 0; k < coef.length; k++) {
      if (!(coef[k] < 0)) continue;
      if (!this.clippable.has(k)) return null;
      coef[k] = 0;
    }
    return { intercept: fit.intercept, coef };
  }
}

/** wall_time = f(sum_prefill_tokens). */
export class PrefillRegressionModel extends RegressionModel {
  readonly workerType = "prefill";
  private readonly isl: MovingAverage;
  private readonly numPrefill: MovingAverage;

  constructor(opts: RegressionOptions) {
    super(opts, 1, new Set());
    this.isl = new MovingAverage(opts.maxNumFpmSamples);
    this.numPrefill = new MovingAverage(opts.maxNumFpmSamples);
  }

  protected features(fpm: ForwardPassMetrics): number[] {
    return [fpm.sumPrefillTokens];
  }

  protected updateAverages(fpm: ForwardPassMetrics): void {
    if (fpm.numPrefillRequests > 0) this.isl.add(fpm.sumPrefillTokens / fpm.numPrefillRequests);
    this.numPrefill.add(fpm.numPrefillRequests);
  }

  override get avgIsl(): number {
    return this.isl.value;
  }
  override get avgNumPrefill(): number {
    return this.numPrefill.value;
  }

  forwardPassS(prefillTokens: number): number | null {
    return this.predict([prefillTokens]);
  }
}

/**
 * wall_time = f(num_decode_requests, sum_decode_kv_tokens). KV tokens dominate (attention); the request
 * count is a weak, collinear second signal, so its coefficient is clippable.
 */
export class DecodeRegressionModel extends RegressionModel {
  readonly workerType = "decode";
  private readonly decodeLength: MovingAverage;
  private readonly numDecode: MovingAverage;
  private maxKv = 0;

  constructor(opts: RegressionOptions) {
    super(opts, 2, new Set([0]));
    this.decodeLength = new MovingAverage(opts.maxNumFpmSamples);
    this.numDecode = new MovingAverage(opts.maxNumFpmSamples);
  }

  protected features(fpm: ForwardPassMetrics): number[] {
    return [fpm.numDecodeRequests, fpm.sumDecodeKvTokens];
  }

  protected updateAverages(fpm: ForwardPassMetrics): void {
    if (fpm.numDecodeRequests > 0) this.decodeLength.add(fpm.sumDecodeKvTokens / fpm.numDecodeRequests);
    this.numDecode.add(fpm.numDecodeRequests);
    if (fpm.sumDecodeKvTokens > this.maxKv) this.maxKv = fpm.sumDecodeKvTokens;
  }

  override get avgDecodeLength(): number {
    return this.decodeLength.value;
  }
  get avgNumDecode(): number {
    return this.numDecode.value;
  }
  /** Largest scheduled decode KV seen (capacity-search fallback when max_kv_tokens is unknown). */
  get maxObservedKv(): number {
    return this.maxKv;
  }

  forwardPassS(
    _prefillTokens: number,
    _prefillRequests: number,
    decodeRequests: number,
    decodeKvTokens: number,
  ) {
    return this.predict([decodeRequests, decodeKvTokens]);
  }
}

/** wall_time = f(sum_prefill_tokens, sum_decode_kv_tokens): chunked prefill piggybacking on decode. */
export class AggRegressionModel extends RegressionModel {
  readonly workerType = "aggregated";
  private readonly isl: MovingAverage;
  private readonly decodeLength: MovingAverage;
  private readonly prefillTokens: MovingAverage;
  private readonly numPrefill: MovingAverage;
  private readonly numDecode: MovingAverage;

  constructor(opts: RegressionOptions) {
    super(opts, 2, new Set());
    const w = opts.maxNumFpmSamples;
    this.isl = new MovingAverage(w);
    this.decodeLength = new MovingAverage(w);
    this.prefillTokens = new MovingAverage(w);
    this.numPrefill = new MovingAverage(w);
    this.numDecode = new MovingAverage(w);
  }

  protected features(fpm: ForwardPassMetrics): number[] {
    return [fpm.sumPrefillTokens, fpm.sumDecodeKvTokens];
  }

  protected updateAverages(fpm: ForwardPassMetrics): void {
    if (fpm.numPrefillRequests > 0) this.isl.add(fpm.sumPrefillTokens / fpm.numPrefillRequests);
    if (fpm.numDecodeRequests > 0) this.decodeLength.add(fpm.sumDecodeKvTokens / fpm.numDecodeRequests);
    this.prefillTokens.add(fpm.sumPrefillTokens);
    this.numPrefill.add(fpm.numPrefillRequests);
    this.numDecode.add(fpm.numDecodeRequests);
  }

  override get avgIsl(): number {
    return this.isl.value;
  }
  override get avgDecodeLength(): number {
    return this.decodeLength.value;
  }
  override get avgPrefillTokens(): number {
    return this.prefillTokens.value;
  }
  override get avgNumPrefill(): number {
    return this.numPrefill.value;
  }
  get avgNumDecode(): number {
    return this.numDecode.value;
  }

  forwardPassS(
    prefillTokens: number,
    _prefillRequests: number,
    _decodeRequests: number,
    decodeKvTokens: number,
  ) {
    return this.predict([prefillTokens, decodeKvTokens]);
  }
}
