/**
 * Time series of a replay (`prediction.json` → `timeseries`, docs/metrics.md "Time series").
 *
 * Two halves:
 *  - `TimelineSampler` records worker state (queue depth, running, KV utilization, ready workers
 *    per role) at bucket boundaries t_k = k·interval. The replay calls `sampleUntil(t)` when its
 *    clock first reaches or passes `nextBoundaryMs`, before processing the events at t, so a
 *    sample is the state just before the events at t ≥ t_k; skipped boundaries get the same
 *    (unchanged) state. It adds no events, so it cannot change the replay's event order.
 *  - `buildTimeseries` buckets the per-request columns of the collector after the run (arrivals,
 *    completions, output tokens, TTFT and ITL percentiles).
 */

import type {
  LatencyTimeseries,
  PercentileSeries,
  TimeseriesReport,
  WorkerTimeseries,
} from "../output/timeseries.js";
import type { WorkerRole } from "../util/workerRole.js";
import { type Collector, Terminal } from "./collector.js";
import { nearestRank } from "./distribution.js";
import { hasSla, isGood, type SlaThresholds } from "./goodput.js";

/** The bucket count the interval aims at (one hour ⇒ 5 s buckets). */
export const TARGET_BUCKETS = 720;
/** Hard cap while sampling: past it the interval is coarsened (runs that outlast their horizon). */
export const MAX_BUCKETS = 1440;
/** The finest interval, ms. */
export const MIN_INTERVAL_MS = 100;

/** The `timeseries` object of prediction.json: its contract (types and schema) is src/output/timeseries.ts. */
export type { LatencyTimeseries, PercentileSeries, TimeseriesReport, WorkerTimeseries };

/**
 * What the sampler reads from one attention-DP rank (VllmEngine satisfies it). Passes execute
 * eagerly at their start, so the in-flight getters add back what the pass in flight finishes.
 */
export interface SampledEngine {
  readonly waitingCount: number;
  readonly inFlightBatchCount: number;
  readonly inFlightActiveBlocks: number;
  readonly pool: { readonly capacity: number };
}

/** What the sampler reads from one pool of workers (WorkerPool satisfies it). */
export interface SampledPool {
  readonly role: WorkerRole;
  readonly ranksPerWorker: number;
  /** Workers ever created: ids 0 .. workerCount − 1. */
  readonly workerCount: number;
  readonly readyCount: number;
  /** Engine per slot (worker w's ranks are slots w·D .. w·D + D − 1). */
  readonly engines: readonly SampledEngine[];
  /** Whether worker `w` is provisioned (starting, ready or draining), i.e. not removed. */
  isProvisioned(w: number): boolean;
}

/** A pool to sample, with requests waiting for one of its slots outside the engines (or null). */
export interface SampledPoolSource {
  readonly pool: SampledPool;
  readonly extraWaiting: ((slot: number) => number) | null;
}

/**
 * The smallest "nice" step (1, 2 or 5 × 10^k ms, at least `MIN_INTERVAL_MS`) that covers
 * `spanMs` in at most `TARGET_BUCKETS` buckets.
 */
export function niceIntervalMs(spanMs: number): number {
  const wanted = Math.max(MIN_INTERVAL_MS, spanMs / TARGET_BUCKETS);
  let decade = MIN_INTERVAL_MS;
  for (;;) {
    for (const m of [1, 2, 5]) if (m * decade >= wanted) return m * decade;
    decade *= 10;
  }
}

/**
 * The next coarser nice step that is a multiple of `step`, so that coarsening keeps every
 * `factor`-th sample exactly: 1 → 2 (×2), 2 → 10 (×5), 5 → 10 (×2), times 10^k.
 */
export function coarserFactor(step: number): number {
  let mantissa = step;
  while (mantissa >= 10) mantissa /= 10;
  return Math.round(mantissa) === 2 ? 5 : 2;
}

/** A NaN-padded Float64Array that grows by doubling (NaN = no value). */
class Series {
  values: Float64Array;

  constructor(length: number) {
    this.values = new Float64Array(Math.max(64, length * 2)).fill(Number.NaN);
  }

  set(index: number, value: number): void {
    if (index >= this.values.length) {
      const grown = new Float64Array(this.values.length * 2).fill(Number.NaN);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[index] = value;
  }

  /** Keeps samples 0, f, 2f, … of the first `count` (in place). */
  decimate(count: number, factor: number): void {
    const v = this.values;
    const end = Math.min(count, v.length);
    let j = 0;
    for (let i = 0; i < end; i += factor) v[j++] = v[i];
    v.fill(Number.NaN, j, end);
  }

  /** The first `count` samples (NaN past the last one set: a removed worker's series stops growing). */
  take(count: number): Float64Array {
    const out = new Float64Array(count).fill(Number.NaN);
    out.set(this.values.subarray(0, Math.min(count, this.values.length)));
    return out;
  }
}

interface WorkerSeries {
  readonly queue: Series;
  readonly running: Series;
  readonly kv: Series;
}

/** Sampled state, frozen at the end of the run. */
export interface TimelineSamples {
  readonly intervalMs: number;
  /** Buckets sampled: t_k for k < count, covering [0, end of the run]. */
  readonly count: number;
  readonly pools: readonly {
    readonly role: WorkerRole;
    readonly ready: Float64Array;
    readonly workers: readonly {
      readonly queue: Float64Array;
      readonly running: Float64Array;
      readonly kv: Float64Array;
    }[];
  }[];
}

/**
 * Samples worker state lazily at bucket boundaries (see the module comment). The interval is
 * chosen up front from `horizonMs` (the latest arrival known at the start); a run that outlasts
 * `MAX_BUCKETS` buckets at that interval coarsens it on the way, keeping every factor-th sample.
 */
export class TimelineSampler {
  /** The next boundary to sample; the replay compares its clock with this (one compare per timestamp). */
  nextBoundaryMs = 0;
  private intervalMs: number;
  private count = 0;
  private readonly ready: Series[];
  private readonly workers: WorkerSeries[][];

  constructor(
    private readonly sources: readonly SampledPoolSource[],
    horizonMs: number,
  ) {
    this.intervalMs = niceIntervalMs(horizonMs);
    this.ready = sources.map(() => new Series(0));
    this.workers = sources.map(() => []);
  }

  /** Records every boundary t_k ≤ t not yet recorded, with the current state. */
  sampleUntil(t: number): void {
    while (this.nextBoundaryMs <= t) {
      if (this.count === MAX_BUCKETS) {
        this.coarsen();
        continue;
      }
      this.sample(this.count++);
      this.nextBoundaryMs = this.count * this.intervalMs;
    }
  }

  /** The samples up to `endMs` (the run's last processed time). */
  finish(endMs: number): TimelineSamples {
    this.sampleUntil(endMs);
    const n = this.count;
    return {
      intervalMs: this.intervalMs,
      count: n,
      pools: this.sources.map((src, p) => ({
        role: src.pool.role,
        ready: this.ready[p].take(n),
        workers: this.workers[p].map((s) => ({
          queue: s.queue.take(n),
          running: s.running.take(n),
          kv: s.kv.take(n),
        })),
      })),
    };
  }

  private sample(k: number): void {
    for (let p = 0; p < this.sources.length; p++) {
      const { pool, extraWaiting } = this.sources[p];
      this.ready[p].set(k, pool.readyCount);
      const series = this.workers[p];
      const D = pool.ranksPerWorker;
      for (let w = 0; w < pool.workerCount; w++) {
        if (w === series.length) {
          series.push({ queue: new Series(k + 1), running: new Series(k + 1), kv: new Series(k + 1) });
        }
        if (!pool.isProvisioned(w)) continue; // stays NaN: not present
        let waiting = 0;
        let running = 0;
        let used = 0;
        let total = 0;
        for (let r = 0; r < D; r++) {
          const slot = w * D + r;
          const engine = pool.engines[slot];
          waiting += engine.waitingCount;
          if (extraWaiting !== null) waiting += extraWaiting(slot);
          running += engine.inFlightBatchCount;
          used += engine.inFlightActiveBlocks;
          total += engine.pool.capacity;
        }
        const s = series[w];
        s.queue.set(k, waiting);
        s.running.set(k, running);
        s.kv.set(k, total > 0 ? used / total : 0);
      }
    }
  }

  private coarsen(): void {
    const factor = coarserFactor(this.intervalMs);
    const n = this.count;
    for (let p = 0; p < this.sources.length; p++) {
      this.ready[p].decimate(n, factor);
      for (const s of this.workers[p]) {
        s.queue.decimate(n, factor);
        s.running.decimate(n, factor);
        s.kv.decimate(n, factor);
      }
    }
    this.count = Math.ceil(n / factor);
    this.intervalMs *= factor;
    this.nextBoundaryMs = this.count * this.intervalMs;
  }
}

/** Latency buckets aim at this many samples each... */
export const LATENCY_SAMPLES_PER_BUCKET = 50;
/** ...with at least this many buckets (short or light runs: fewer samples each)... */
export const LATENCY_MIN_BUCKETS = 20;
/** ...and at most this many (long, heavy runs: more samples each). */
export const LATENCY_MAX_BUCKETS = 120;

/**
 * The latency buckets' interval for a run of `count` buckets of `intervalMs` with `samples` TTFT
 * samples: aim at `samples / 50` buckets, clamped to 20…120, and take the smallest nice step that
 * is a multiple of `intervalMs` and covers the run in that many buckets. One hour with 12,000
 * requests: 120 buckets wanted → 50 s buckets (72 of them) rather than 720 of 5 s.
 */
export function latencyIntervalMs(intervalMs: number, count: number, samples: number): number {
  const wanted = Math.min(
    LATENCY_MAX_BUCKETS,
    Math.max(LATENCY_MIN_BUCKETS, Math.floor(samples / LATENCY_SAMPLES_PER_BUCKET)),
  );
  const spanMs = count * intervalMs;
  let decade = MIN_INTERVAL_MS;
  for (;;) {
    for (const m of [1, 2, 5]) {
      const step = m * decade;
      if (step >= intervalMs && step % intervalMs === 0 && Math.ceil(spanMs / step) <= wanted) return step;
    }
    decade *= 10;
  }
}

/** The per-request columns the latency and throughput buckets read (a `Collector`). */
export type TimelineColumns = Pick<
  Collector,
  "arrival" | "firstToken" | "lastToken" | "terminal" | "tokens" | "status" | "admissions"
>;

const round3 = (x: number): number => Math.round(x * 1000) / 1000;
const round4 = (x: number): number => Math.round(x * 10000) / 10000;

/** Builds the `timeseries` report from the sampled state and the per-request columns. */
export function buildTimeseries(
  samples: TimelineSamples,
  columns: TimelineColumns,
  sla: SlaThresholds | null = null,
): TimeseriesReport {
  const n = samples.count;
  // With an SLA: the completions and output tokens of good requests (the summary's goodput rule),
  // so attainment and goodput can be read per bucket; they sum to the summary's goodput counts.
  const slaSet = hasSla(sla);
  const goodCompletions = new Array<number>(slaSet ? n : 0).fill(0);
  const goodOutputTokens = new Array<number>(slaSet ? n : 0).fill(0);
  const interval = samples.intervalMs;
  const bucketOf = (time: number): number => Math.min(n - 1, Math.floor(time / interval));
  const arrivals = new Array<number>(n).fill(0);
  const completions = new Array<number>(n).fill(0);
  const outputTokens = new Array<number>(n).fill(0);
  const ttftBucket = new Int32Array(columns.arrival.length).fill(-1);
  const ttftValue = new Float64Array(columns.arrival.length);
  const itlBucket = new Int32Array(columns.arrival.length).fill(-1);
  const itlValue = new Float64Array(columns.arrival.length);
  for (let r = 0; r < columns.arrival.length; r++) {
    const arrival = columns.arrival[r];
    if (Number.isNaN(arrival)) continue;
    arrivals[bucketOf(arrival)]++;
    // The summary's "completed" population: admitted and terminated Completed.
    if (columns.status[r] !== Terminal.Completed || columns.admissions[r] === 0) continue;
    const done = bucketOf(columns.terminal[r]);
    const tokens = columns.tokens[r];
    completions[done]++;
    outputTokens[done] += tokens;
    if (slaSet) {
      const ttft = tokens >= 1 ? Math.max(0, columns.firstToken[r] - arrival) : null;
      const e2e = tokens >= 1 ? columns.lastToken[r] - arrival : null;
      if (isGood(sla, ttft, e2e, tokens)) {
        goodCompletions[done]++;
        goodOutputTokens[done] += tokens;
      }
    }
    if (tokens >= 1) {
      ttftBucket[r] = bucketOf(columns.firstToken[r]);
      ttftValue[r] = Math.max(0, columns.firstToken[r] - arrival);
    }
    if (tokens >= 2) {
      itlBucket[r] = done;
      itlValue[r] = (columns.lastToken[r] - columns.firstToken[r]) / (tokens - 1);
    }
  }
  const active: TimeseriesReport["active_workers"] = {};
  const workers: WorkerTimeseries[] = [];
  for (const pool of samples.pools) {
    active[pool.role] = Array.from(pool.ready);
    pool.workers.forEach((s, w) => {
      workers.push({
        role: pool.role,
        worker_id: w,
        queue_depth: toNullable(s.queue, (x) => x),
        running: toNullable(s.running, (x) => x),
        kv_utilization: toNullable(s.kv, round4),
      });
    });
  }
  return {
    interval_ms: interval,
    t_ms: Array.from({ length: n }, (_, k) => k * interval),
    arrivals,
    completions,
    output_tokens: outputTokens,
    ...(slaSet ? { good_completions: goodCompletions, good_output_tokens: goodOutputTokens } : {}),
    ttft_ms: bucketPercentiles(ttftBucket, ttftValue, n),
    itl_ms: bucketPercentiles(itlBucket, itlValue, n),
    active_workers: active,
    workers,
    latency: latencySeries(interval, n, ttftBucket, ttftValue, itlBucket, itlValue),
  };
}

/**
 * The latency percentiles again, over the coarser buckets of `latencyIntervalMs` (exact: from the
 * per-request samples, not merged from the fine buckets). A fine bucket index maps to coarse
 * bucket ⌊k · interval / coarse⌋, since the coarse step is a multiple of the fine one.
 */
function latencySeries(
  interval: number,
  n: number,
  ttftBucket: Int32Array,
  ttftValue: Float64Array,
  itlBucket: Int32Array,
  itlValue: Float64Array,
): LatencyTimeseries {
  let samples = 0;
  for (let r = 0; r < ttftBucket.length; r++) if (ttftBucket[r] >= 0) samples++;
  const coarse = latencyIntervalMs(interval, n, samples);
  const factor = coarse / interval;
  const m = Math.ceil(n / factor);
  const regroup = (fine: Int32Array): Int32Array => fine.map((k) => (k < 0 ? -1 : Math.floor(k / factor)));
  const ttft = regroup(ttftBucket);
  const itl = regroup(itlBucket);
  return {
    interval_ms: coarse,
    t_ms: Array.from({ length: m }, (_, k) => k * coarse),
    ttft_ms: bucketPercentiles(ttft, ttftValue, m),
    ttft_samples: bucketCounts(ttft, m),
    itl_ms: bucketPercentiles(itl, itlValue, m),
    itl_samples: bucketCounts(itl, m),
  };
}

function bucketCounts(bucket: Int32Array, n: number): number[] {
  const out = new Array<number>(n).fill(0);
  for (let r = 0; r < bucket.length; r++) if (bucket[r] >= 0) out[bucket[r]]++;
  return out;
}

function toNullable(values: Float64Array, round: (x: number) => number): (number | null)[] {
  return Array.from(values, (x) => (Number.isNaN(x) ? null : round(x)));
}

/**
 * p50/p90/p99 of the values of each bucket (exact: sorted, nearest rank as the summary's exact
 * distributions); null for an empty bucket. `bucket[r]` −1 = request r has no sample.
 */
function bucketPercentiles(bucket: Int32Array, value: Float64Array, n: number): PercentileSeries {
  // Counting sort by bucket, then a numeric sort inside each bucket.
  const start = new Int32Array(n + 1);
  for (let r = 0; r < bucket.length; r++) if (bucket[r] >= 0) start[bucket[r] + 1]++;
  for (let k = 0; k < n; k++) start[k + 1] += start[k];
  const fill = start.slice(0, n);
  const sorted = new Float64Array(start[n]);
  for (let r = 0; r < bucket.length; r++) if (bucket[r] >= 0) sorted[fill[bucket[r]]++] = value[r];
  const out: PercentileSeries = { p50: [], p90: [], p99: [] };
  for (let k = 0; k < n; k++) {
    const size = start[k + 1] - start[k];
    if (size === 0) {
      out.p50.push(null);
      out.p90.push(null);
      out.p99.push(null);
      continue;
    }
    const slice = sorted.subarray(start[k], start[k + 1]).sort();
    out.p50.push(round3(slice[nearestRank(size, 50)]));
    out.p90.push(round3(slice[nearestRank(size, 90)]));
    out.p99.push(round3(slice[nearestRank(size, 99)]));
  }
  return out;
}
