/**
 * The Planner's perf model: forward-pass wall time learned online from the FPMs the workers
 * publish, as the reference's Planner learns it (Dynamo 1.6's `PlannerEnginePerfModel`,
 * `planner/core/perf_model/ais_adapter.py`, over the AIS core's FPM regression of aisimulate
 * 0.13.0, `estimation_mode: fpm_regression`; docs/planner.md "Perf model"):
 *
 * - each pass is described by two features, attention work and token-wise FFN work (`features.ts`);
 * - a prefill or decode worker keeps one regression store, an aggregated worker one per kind of
 *   pass (decode only, mixed, prefill only), each ready on its own; a pass is learned from and
 *   priced by the store of its kind;
 * - each store retains at most `max_num_fpm_samples` passes spread over its operating range
 *   (`samples.ts`) and fits a standardized non-negative plane over them (`standardizedNnls.ts`);
 * - moving averages of the passes synthesise the "next request" of the load estimates.
 */

import type { WorkerRole } from "../../util/workerRole.js";
import type { EnginePerfModel, ForwardPassMetrics } from "../types.js";
import {
  AGGREGATED_KINDS,
  type PassWork,
  passFeatures,
  type WorkloadKind,
  workloadKind,
} from "./features.js";
import { BucketedSamples, MovingAverage, type Sample } from "./samples.js";
import { fitStandardizedNnlsRows, predictMs, type StandardizedFit } from "./standardizedNnls.js";

/**
 * What the load-scaling queries need from a perf model: forward-pass times plus the moving averages
 * used to synthesise the "next request" (`ais_adapter.py` `_synthetic_prefill_fpm`,
 * `_synthetic_decode_fpm`; `engine_query.py` `_AggLoadAverages`).
 */
export interface QueryPerfModel extends EnginePerfModel {
  readonly workerType: WorkerRole;
  /** Mean prompt length per prefill request over the recent passes, a pass without prompts counting 0. */
  readonly avgIsl: number;
  /** Mean scheduled KV tokens per decode request over the recent passes that decode. */
  readonly avgDecodeLength: number;
  /** Mean scheduled prefill tokens per pass: the typical prefill mix riding an agg decode pass. */
  readonly avgPrefillTokens: number;
  /** Mean scheduled prefill requests per pass. */
  readonly avgNumPrefill: number;
}

export interface RegressionOptions {
  /** `max_num_fpm_samples`: passes retained per store, and the moving averages' window. */
  readonly maxNumFpmSamples: number;
  /** `load_min_observations`: a store's readiness threshold. */
  readonly minObservations: number;
  /** `fpm_sample_bucket_size`: retention cells, √ of it per feature axis. */
  readonly bucketCount: number;
}

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

const FEATURES = 2;

/**
 * One workload kind's retained passes and their fitted plane, refitted after every pass it learns.
 * A refit that is not a model (an intercept-only plane, no varying feature) leaves the last
 * accepted plane in place, so a store that has been ready stays ready: the reference's store does
 * so (aisimulate 0.13.0's FPM regression, probed with scripts/reference/regression.py's
 * `stale_scenarios`: passes whose times stop rising with their work keep the plane fitted before
 * them, through insertions and evictions alike; docs/planner.md "Perf model").
 */
export class RegressionStore {
  private readonly samples: BucketedSamples;
  /** The last accepted plane; null before the first. */
  private fit: StandardizedFit | null = null;
  /** The retained samples as the fit reads them (rows of `FEATURES`, and their ms), refilled per pass. */
  private readonly rowsX: Float64Array;
  private readonly rowsY: Float64Array;

  constructor(
    readonly kind: WorkloadKind,
    private readonly opts: RegressionOptions,
  ) {
    this.samples = new BucketedSamples(
      FEATURES,
      Math.floor(Math.sqrt(opts.bucketCount)),
      opts.maxNumFpmSamples,
    );
    // Retention caps the samples at maxNumFpmSamples once a pass is added (one more while it is).
    this.rowsX = new Float64Array(FEATURES * (opts.maxNumFpmSamples + 1));
    this.rowsY = new Float64Array(opts.maxNumFpmSamples + 1);
  }

  add(x: ArrayLike<number>, wallMs: number): void {
    this.samples.add([x[0], x[1]], wallMs);
    const n = this.samples.writeRows(this.rowsX, this.rowsY);
    const fit = fitStandardizedNnlsRows(this.rowsX, this.rowsY, n, FEATURES, this.opts.minObservations);
    if (fit !== null) this.fit = fit;
  }

  get size(): number {
    return this.samples.size;
  }

  /** Retained samples ([x0, x1] → ms) in cell order (diagnostics and tests). */
  retainedSamples(): readonly Sample[] {
    return this.samples.all();
  }

  /** The accepted plane, or null when the store is not ready. */
  plane(): StandardizedFit | null {
    return this.fit;
  }

  get ready(): boolean {
    return this.plane() !== null;
  }

  predictMs(x: ArrayLike<number>): number | null {
    const fit = this.plane();
    return fit === null ? null : predictMs(fit, x);
  }
}

/** The stores of a worker role, in the reference's order. */
function kindsOf(role: WorkerRole): readonly WorkloadKind[] {
  if (role === "prefill") return ["pure_prefill"];
  if (role === "decode") return ["pure_decode"];
  return AGGREGATED_KINDS;
}

/** The pass work an FPM schedules. */
function workOf(fpm: ForwardPassMetrics): PassWork {
  return {
    prefillTokens: fpm.sumPrefillTokens,
    prefillRequests: fpm.numPrefillRequests,
    prefillKvTokens: fpm.sumPrefillKvTokens,
    decodeRequests: fpm.numDecodeRequests,
    decodeKvTokens: fpm.sumDecodeKvTokens,
  };
}

/** One role's perf model (the reference's Planner keeps one per role, fed every worker's FPMs). */
export class FpmRegressionModel implements QueryPerfModel {
  readonly minObservations: number;
  private readonly stores: ReadonlyMap<WorkloadKind, RegressionStore>;
  /** A prefill or decode worker's one store (null for an aggregated worker's several). */
  private readonly single: RegressionStore | null;
  private readonly isl: MovingAverage;
  private readonly decodeLength: MovingAverage;
  private readonly prefillTokens: MovingAverage;
  private readonly numPrefill: MovingAverage;
  private readonly x = new Float64Array(FEATURES);

  constructor(
    readonly workerType: WorkerRole,
    opts: RegressionOptions,
  ) {
    this.minObservations = opts.minObservations;
    this.stores = new Map(kindsOf(workerType).map((k) => [k, new RegressionStore(k, opts)]));
    this.single = workerType === "aggregated" ? null : [...this.stores.values()][0];
    const w = opts.maxNumFpmSamples;
    this.isl = new MovingAverage(w);
    this.decodeLength = new MovingAverage(w);
    this.prefillTokens = new MovingAverage(w);
    this.numPrefill = new MovingAverage(w);
  }

  /**
   * One pass observed: the next-request averages first (`_observe_for_next_request`: every FPM,
   * idle heartbeats too), then the pass's store learns its wall time (a positive one only), then the
   * agg prefill mix (`_AggLoadAverages`, every pass tuned on).
   */
  addObservation(fpm: ForwardPassMetrics): void {
    this.isl.add(fpm.numPrefillRequests > 0 ? fpm.sumPrefillTokens / fpm.numPrefillRequests : 0);
    if (fpm.numDecodeRequests > 0) this.decodeLength.add(fpm.sumDecodeKvTokens / fpm.numDecodeRequests);
    const wallMs = fpm.wallTimeS * 1000;
    if (wallMs > 0 && Number.isFinite(wallMs)) {
      const work = workOf(fpm);
      const store = this.storeOf(work);
      if (store !== null) {
        passFeatures(this.workerType, work, this.x);
        store.add(this.x, wallMs);
      }
    }
    this.numPrefill.add(Math.max(0, fpm.numPrefillRequests));
    this.prefillTokens.add(fpm.sumPrefillTokens);
  }

  /** Bootstrap from pre-deployment benchmark FPMs (same path as live samples). */
  loadBenchmarkFpms(fpms: readonly ForwardPassMetrics[]): void {
    for (const fpm of fpms) this.addObservation(fpm);
  }

  /** The store that learns and prices a pass of this work; null for an empty pass. */
  private storeOf(work: PassWork): RegressionStore | null {
    const kind = workloadKind(work);
    if (kind === null) return null;
    return this.single ?? this.stores.get(kind) ?? null;
  }

  /** Ready when any store is (the reference's `readiness: ready`). */
  hasSufficientData(): boolean {
    for (const s of this.stores.values()) if (s.ready) return true;
    return false;
  }

  /** Passes retained over the stores. */
  get numObservations(): number {
    let n = 0;
    for (const s of this.stores.values()) n += s.size;
    return n;
  }

  /** The stores by kind (diagnostics and tests). */
  store(kind: WorkloadKind): RegressionStore | undefined {
    return this.stores.get(kind);
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

  /**
   * Seconds for one pass of this work (no cached prompt tokens: the queries' synthetic passes have
   * none), priced by the store of its kind: 0 for an empty pass, null while that store is not ready.
   */
  forwardPassS(
    prefillTokens: number,
    prefillRequests: number,
    decodeRequests: number,
    decodeKvTokens: number,
  ): number | null {
    const ms = this.estimateMs({
      prefillTokens,
      prefillRequests,
      prefillKvTokens: 0,
      decodeRequests,
      decodeKvTokens,
    });
    return ms === null ? null : Math.max(0, ms) / 1000;
  }

  /** The reference's `estimate_forward_pass_time_ms` of one pass: 0 when it schedules nothing. */
  estimateMs(work: PassWork): number | null {
    const store = this.storeOf(work);
    if (store === null) return 0;
    passFeatures(this.workerType, work, this.x);
    return store.predictMs(this.x);
  }
}
