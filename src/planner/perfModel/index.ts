/**
 * The Planner's perf-model regressions: forward-pass wall time learned online from FPMs, with the
 * legacy Dynamo models' features and sample bookkeeping (`ai-dynamo/dynamo@439d645:components/src/dynamo/planner/core/perf_model/base.py`,
 * `core/perf_model/{base,prefill,decode,agg}.py`) and the reference's fit and readiness: non-negative
 * least squares, and for an aggregated worker one store per workload kind (aisimulate 0.13.0's AIS
 * core FPM regression, which Dynamo's planner uses; docs/planner.md "Perf model"). Its own feature
 * set is compiled and not public; these stand in for it.
 */

import type { WorkerRole } from "../../util/workerRole.js";
import type { EnginePerfModel, ForwardPassMetrics } from "../types.js";
import { fitNnls, type LinearFit } from "./nnls.js";
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
  private fit: LinearFit | null | undefined = undefined;

  protected constructor(
    opts: RegressionOptions,
    private readonly dims: 1 | 2,
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

  /** The accepted fit, or null when not ready. */
  coefficients(): LinearFit | null {
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
   * Non-negative least squares (`nnls.ts`), as the reference fits its planner regressions
   * (aisimulate 0.13.0, `fpm_regression.fit.kind: standardized_nnls`): a negative slope ("more load,
   * less time") is held at 0 and the rest refitted, and so is a negative intercept, which an OLS fit
   * of passes that all carry thousands of prompt tokens can produce and which would price a light
   * pass at nothing. Not ready when the bounds leave only the intercept although the samples' loads
   * vary (time falls with load): the reference's rule that an intercept-only fit of identifiable
   * slopes is not a model. Flat data (every pass the same time) is a model: its slopes are 0.
   */
  private refit(): LinearFit | null {
    const all = this.samples.all();
    if (all.length < this.minObservations) return null;
    const fit = fitNnls(
      all.map((s) => s.x),
      all.map((s) => s.y),
      this.dims,
    );
    if (fit === null || !fit.constrained || fit.coef.some((c) => c > 0)) return fit;
    const varies = (k: number) => all.some((s) => s.x[k] !== all[0].x[k]);
    for (let k = 0; k < this.dims; k++) if (varies(k)) return null;
    return fit;
  }
}

/** wall_time = f(sum_prefill_tokens). */
export class PrefillRegressionModel extends RegressionModel {
  readonly workerType = "prefill";
  private readonly isl: MovingAverage;
  private readonly numPrefill: MovingAverage;

  constructor(opts: RegressionOptions) {
    super(opts, 1);
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
 * count is a weak, collinear second signal whose OLS slope can flip negative (held at 0 by the fit).
 */
export class DecodeRegressionModel extends RegressionModel {
  readonly workerType = "decode";
  private readonly decodeLength: MovingAverage;
  private readonly numDecode: MovingAverage;
  private maxKv = 0;

  constructor(opts: RegressionOptions) {
    super(opts, 2);
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

/** wall_time = f(sum_prefill_tokens, sum_decode_kv_tokens) of passes that prefill and decode together. */
class MixedPassRegression extends RegressionModel {
  readonly workerType = "aggregated";

  constructor(opts: RegressionOptions) {
    super(opts, 2);
  }

  protected features(fpm: ForwardPassMetrics): number[] {
    return [fpm.sumPrefillTokens, fpm.sumDecodeKvTokens];
  }

  protected updateAverages(): void {}

  forwardPassS(
    prefillTokens: number,
    _prefillRequests: number,
    _decodeRequests: number,
    decodeKvTokens: number,
  ) {
    return this.predict([prefillTokens, decodeKvTokens]);
  }
}

/**
 * The aggregated worker's model: one regression per workload kind, as the reference's planner
 * keeps them (its AIS core FPM regression, aisimulate 0.13.0: `pure_prefill`, `pure_decode` and
 * `contains_locally_mixed` stores, each ready on its own once it holds `load_min_observations`
 * samples; docs/planner.md "Perf model"). A pass that prefills only feeds and is priced by the
 * prefill regression (tokens), one that decodes only by the decode regression (requests, KV
 * tokens), a mixed pass by the mixed one (prefill tokens, decode KV tokens). So the bootstrap's
 * prefill-only and decode-only benchmark passes do not make the mixed estimate ready: the TTFT and
 * ITL estimates of an aggregated worker, whose passes carry its typical prefill mix, wait for
 * `load_min_observations` mixed passes observed live. The model is ready when any store is.
 */
export class AggRegressionModel implements QueryPerfModel {
  readonly workerType = "aggregated";
  readonly minObservations: number;
  private readonly prefillOnly: PrefillRegressionModel;
  private readonly decodeOnly: DecodeRegressionModel;
  private readonly mixed: MixedPassRegression;
  private readonly isl: MovingAverage;
  private readonly decodeLength: MovingAverage;
  private readonly prefillTokens: MovingAverage;
  private readonly numPrefill: MovingAverage;
  private readonly numDecode: MovingAverage;

  constructor(opts: RegressionOptions) {
    this.minObservations = opts.minObservations;
    this.prefillOnly = new PrefillRegressionModel(opts);
    this.decodeOnly = new DecodeRegressionModel(opts);
    this.mixed = new MixedPassRegression(opts);
    const w = opts.maxNumFpmSamples;
    this.isl = new MovingAverage(w);
    this.decodeLength = new MovingAverage(w);
    this.prefillTokens = new MovingAverage(w);
    this.numPrefill = new MovingAverage(w);
    this.numDecode = new MovingAverage(w);
  }

  /** Averages first (idle heartbeats still count there), then the store of the pass's kind. */
  addObservation(fpm: ForwardPassMetrics): void {
    if (fpm.numPrefillRequests > 0) this.isl.add(fpm.sumPrefillTokens / fpm.numPrefillRequests);
    if (fpm.numDecodeRequests > 0) this.decodeLength.add(fpm.sumDecodeKvTokens / fpm.numDecodeRequests);
    this.prefillTokens.add(fpm.sumPrefillTokens);
    this.numPrefill.add(fpm.numPrefillRequests);
    this.numDecode.add(fpm.numDecodeRequests);
    this.storeOf(fpm.sumPrefillTokens, fpm.numDecodeRequests)?.addObservation(fpm);
  }

  /** Bootstrap from pre-deployment benchmark FPMs (same path as live samples). */
  loadBenchmarkFpms(fpms: readonly ForwardPassMetrics[]): void {
    for (const fpm of fpms) this.addObservation(fpm);
  }

  /** The store of a pass with these prefill tokens and decode requests; null for an empty pass. */
  private storeOf(prefillTokens: number, decodeRequests: number): RegressionModel | null {
    if (prefillTokens > 0) return decodeRequests > 0 ? this.mixed : this.prefillOnly;
    return decodeRequests > 0 ? this.decodeOnly : null;
  }

  hasSufficientData(): boolean {
    return (
      this.mixed.hasSufficientData() ||
      this.prefillOnly.hasSufficientData() ||
      this.decodeOnly.hasSufficientData()
    );
  }

  /** Samples retained over the three stores. */
  get numObservations(): number {
    return this.mixed.numObservations + this.prefillOnly.numObservations + this.decodeOnly.numObservations;
  }

  /** Each store's retained samples and readiness (diagnostics and tests). */
  stores(): {
    readonly prefill: RegressionModel;
    readonly decode: RegressionModel;
    readonly mixed: RegressionModel;
  } {
    return { prefill: this.prefillOnly, decode: this.decodeOnly, mixed: this.mixed };
  }

  get avgIsl(): number {
    return this.isl.value;
  }
  get avgDecodeLength(): number {
    return this.decodeLength.value;
  }
  get avgPrefillTokens(): number {
    return this.prefillTokens.value;
  }
  get avgNumPrefill(): number {
    return this.numPrefill.value;
  }
  get avgNumDecode(): number {
    return this.numDecode.value;
  }

  /** Priced by the store of the pass's kind: null until that store is ready. */
  forwardPassS(
    prefillTokens: number,
    prefillRequests: number,
    decodeRequests: number,
    decodeKvTokens: number,
  ) {
    const store = this.storeOf(prefillTokens, decodeRequests);
    if (store === null) return 0;
    return store.forwardPassS(prefillTokens, prefillRequests, decodeRequests, decodeKvTokens);
  }
}
