/** `prediction.timeseries` (a fleetsim extension; docs/metrics.md "Time series"). */
import * as z from "zod";
import { engineRoleSchema } from "./run.js";

/** Per-bucket values; null where a bucket has no sample. */
const series = z.array(z.number().nullable());

export const percentileSeriesSchema = z.strictObject({ p50: series, p90: series, p99: series });
export type PercentileSeries = z.infer<typeof percentileSeriesSchema>;

export const workerTimeseriesSchema = z.strictObject({
  role: engineRoleSchema,
  worker_id: z.number(),
  queue_depth: series,
  running: series,
  kv_utilization: series,
});
export type WorkerTimeseries = z.infer<typeof workerTimeseriesSchema>;

/** `timeseries.latency` (docs/metrics.md "Latency buckets"). */
export const latencyTimeseriesSchema = z.strictObject({
  /** A nice step (1, 2 or 5 × 10^k ms) that is a multiple of `timeseries.interval_ms`. */
  interval_ms: z.number(),
  t_ms: z.array(z.number()),
  ttft_ms: percentileSeriesSchema,
  /** TTFT samples per bucket. */
  ttft_samples: z.array(z.number()),
  itl_ms: percentileSeriesSchema,
  itl_samples: z.array(z.number()),
});
export type LatencyTimeseries = z.infer<typeof latencyTimeseriesSchema>;

export const timeseriesSchema = z.strictObject({
  interval_ms: z.number(),
  t_ms: z.array(z.number()),
  arrivals: z.array(z.number()),
  completions: z.array(z.number()),
  output_tokens: z.array(z.number()),
  /** With an SLA: completed requests that met it, per bucket of completion (sum: goodput_completed_requests). */
  good_completions: z.array(z.number()).optional(),
  /** With an SLA: their output tokens, per bucket. */
  good_output_tokens: z.array(z.number()).optional(),
  ttft_ms: percentileSeriesSchema,
  itl_ms: percentileSeriesSchema,
  active_workers: z.strictObject({
    aggregated: z.array(z.number()).optional(),
    prefill: z.array(z.number()).optional(),
    decode: z.array(z.number()).optional(),
  }),
  workers: z.array(workerTimeseriesSchema),
  /**
   * Latency percentiles in buckets sized to the run (enough samples per bucket to be read as a
   * trend): what the HTML report draws. `ttft_ms`/`itl_ms` above keep the fine buckets.
   */
  latency: latencyTimeseriesSchema,
});
export type TimeseriesReport = z.infer<typeof timeseriesSchema>;
