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
import { Terminal } from "./collector.js";
import { nearestRank, selectRanks } from "./distribution.js";
import { DEFAULT_COLLECT_LIMIT } from "./exactStatsBuilder.js";
import { hasSla, isGood, type SlaThresholds } from "./goodput.js";
import type { LogChunk, LogColumn, RequestRows } from "./requestLog.js";

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

const round3 = (x: number): number => Math.round(x * 1000) / 1000;
const round4 = (x: number): number => Math.round(x * 10000) / 10000;

/** The log columns the latency and throughput buckets read. */
const BUCKET_COLUMNS: readonly LogColumn[] = [
  "arrival",
  "firstToken",
  "lastToken",
  "terminal",
  "tokens",
  "status",
  "admissions",
];

/**
 * A request's latency sample for the buckets: its fine bucket (−1 when it has none) and value,
 * in `sampleValue` (no allocation per request). TTFT: bucket of the first token; ITL: bucket of
 * the request's end, (last − first) / (tokens − 1).
 */
type Sampler = (c: LogChunk, r: number, bucketOf: (time: number) => number) => number;
let sampleValue = 0;

/** The summary's "completed" population (admitted and terminated Completed) of an arrived request. */
function completed(c: LogChunk, r: number): boolean {
  return !Number.isNaN(c.arrival[r]) && c.status[r] === Terminal.Completed && c.admissions[r] !== 0;
}

const ttftSample: Sampler = (c, r, bucketOf) => {
  if (!completed(c, r) || c.tokens[r] < 1) return -1;
  sampleValue = Math.max(0, c.firstToken[r] - c.arrival[r]);
  return bucketOf(c.firstToken[r]);
};

const itlSample: Sampler = (c, r, bucketOf) => {
  const tokens = c.tokens[r];
  if (!completed(c, r) || tokens < 2) return -1;
  sampleValue = (c.lastToken[r] - c.firstToken[r]) / (tokens - 1);
  return bucketOf(c.terminal[r]);
};

/**
 * Builds the `timeseries` report from the sampled state and the request log: one scan for the
 * counts, then the latency percentiles per bucket (`bucketPercentiles`).
 */
export function buildTimeseries(
  samples: TimelineSamples,
  requests: RequestRows,
  sla: SlaThresholds | null = null,
  collectLimit: number = DEFAULT_COLLECT_LIMIT,
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
  const ttftCounts = new Float64Array(n);
  const itlCounts = new Float64Array(n);
  requests.scan(BUCKET_COLUMNS, (c, rows) => {
    for (let r = 0; r < rows; r++) {
      const arrival = c.arrival[r];
      if (Number.isNaN(arrival)) continue;
      arrivals[bucketOf(arrival)]++;
      if (!completed(c, r)) continue;
      const done = bucketOf(c.terminal[r]);
      const tokens = c.tokens[r];
      completions[done]++;
      outputTokens[done] += tokens;
      if (slaSet) {
        const ttft = tokens >= 1 ? Math.max(0, c.firstToken[r] - arrival) : null;
        const e2e = tokens >= 1 ? c.lastToken[r] - arrival : null;
        if (isGood(sla, ttft, e2e, tokens)) {
          goodCompletions[done]++;
          goodOutputTokens[done] += tokens;
        }
      }
      if (tokens >= 1) ttftCounts[bucketOf(c.firstToken[r])]++;
      if (tokens >= 2) itlCounts[done]++;
    }
  });
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
  // The coarse latency buckets (`latencyIntervalMs`): each is `factor` consecutive fine buckets.
  let samplesTotal = 0;
  for (let k = 0; k < n; k++) samplesTotal += ttftCounts[k];
  const coarse = latencyIntervalMs(interval, n, samplesTotal);
  const factor = coarse / interval;
  const ttft = bucketPercentiles(requests, ttftSample, bucketOf, ttftCounts, factor, collectLimit);
  const itl = bucketPercentiles(requests, itlSample, bucketOf, itlCounts, factor, collectLimit);
  return {
    interval_ms: interval,
    t_ms: Array.from({ length: n }, (_, k) => k * interval),
    arrivals,
    completions,
    output_tokens: outputTokens,
    ...(slaSet ? { good_completions: goodCompletions, good_output_tokens: goodOutputTokens } : {}),
    ttft_ms: ttft.fine,
    itl_ms: itl.fine,
    active_workers: active,
    workers,
    latency: {
      interval_ms: coarse,
      t_ms: Array.from({ length: ttft.coarseCounts.length }, (_, k) => k * coarse),
      ttft_ms: ttft.coarse,
      ttft_samples: Array.from(ttft.coarseCounts),
      itl_ms: itl.coarse,
      itl_samples: Array.from(itl.coarseCounts),
    },
  };
}

function toNullable(values: Float64Array, round: (x: number) => number): (number | null)[] {
  return Array.from(values, (x) => (Number.isNaN(x) ? null : round(x)));
}

/**
 * p50/p90/p99 of the samples of each bucket, at the fine interval and at the coarse one (`factor`
 * consecutive fine buckets, docs/metrics.md "Time series"), both exact: the nearest-rank values of
 * the summary's exact distributions, selected (`selectRanks`: what a sort would put at those ranks,
 * without sorting; the samples are never −0, the one value a selection could misplace); null for
 * an empty bucket. `counts[k]`: samples in fine bucket k.
 * Samples are collected grouped by fine bucket, so a coarse bucket's samples are one contiguous
 * range of the same array: one scan of the log serves both intervals. Coarse buckets are taken in
 * runs holding at most `collectLimit` samples (a bucket larger than that alone), one scan per
 * run, so memory is bounded by the larger of the limit and the largest coarse bucket.
 */
function bucketPercentiles(
  requests: RequestRows,
  sampler: Sampler,
  bucketOf: (time: number) => number,
  counts: Float64Array,
  factor: number,
  collectLimit: number,
): { fine: PercentileSeries; coarse: PercentileSeries; coarseCounts: Float64Array } {
  const n = counts.length;
  const m = Math.ceil(n / factor);
  const coarseCounts = new Float64Array(m);
  for (let k = 0; k < n; k++) coarseCounts[Math.floor(k / factor)] += counts[k];
  const fine: PercentileSeries = { p50: [], p90: [], p99: [] };
  const coarse: PercentileSeries = { p50: [], p90: [], p99: [] };
  let cFrom = 0;
  while (cFrom < m) {
    // Coarse buckets [cFrom, cTo): as many as fit the limit, at least one; fine ones [from, to).
    let cTo = cFrom;
    let total = 0;
    while (cTo < m && (cTo === cFrom || total + coarseCounts[cTo] <= collectLimit))
      total += coarseCounts[cTo++];
    const from = cFrom * factor;
    const to = Math.min(n, cTo * factor);
    const start = new Float64Array(to - from + 1);
    for (let k = from; k < to; k++) start[k - from + 1] = start[k - from] + counts[k];
    const fill = start.slice(0, to - from);
    const samples = new Float64Array(total);
    if (total > 0) {
      requests.scan(BUCKET_COLUMNS, (c, rows) => {
        for (let r = 0; r < rows; r++) {
          const k = sampler(c, r, bucketOf);
          if (k >= from && k < to) samples[fill[k - from]++] = sampleValue;
        }
      });
    }
    for (let k = from; k < to; k++) {
      pushPercentiles(fine, samples.subarray(start[k - from], start[k - from + 1]));
    }
    for (let j = cFrom; j < cTo; j++) {
      const lo = start[j * factor - from];
      const hi = start[Math.min(n, (j + 1) * factor) - from];
      // Selection works on any arrangement: the fine buckets' selections left inside it are fine.
      pushPercentiles(coarse, samples.subarray(lo, hi));
    }
    cFrom = cTo;
  }
  return { fine, coarse, coarseCounts };
}

/** p50/p90/p99 of `samples` (rearranged by the selection), or nulls when it is empty. */
function pushPercentiles(out: PercentileSeries, samples: Float64Array): void {
  const size = samples.length;
  if (size === 0) {
    out.p50.push(null);
    out.p90.push(null);
    out.p99.push(null);
    return;
  }
  const r50 = nearestRank(size, 50);
  const r90 = nearestRank(size, 90);
  const r99 = nearestRank(size, 99);
  selectRanks(samples, [r50, r90, r99]);
  out.p50.push(round3(samples[r50]));
  out.p90.push(round3(samples[r90]));
  out.p99.push(round3(samples[r99]));
}
