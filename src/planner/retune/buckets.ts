/**
 * Traffic buckets for the load-predictor pre-sweep and a predictor swap (docs/retune.md §5 step 1,
 * §6): the history and window requests grouped at the inner Planner's throughput interval, aligned
 * so that the last bucket ends exactly at a given time (the window end for the pre-sweep and a swap,
 * the window start for the inner Planner's warm-up). Same shape as `extractMetricsFromMooncake`
 * windows, but end-aligned and with trailing empty buckets kept: an idle end of the window is traffic
 * the predictor must see.
 */
import type { TraceColumns, TrafficWindow } from "../trafficWindows.js";

/** Relative tolerance for "the range is a whole number of buckets". */
const EPS = 1e-9;

/**
 * Buckets [end − m·I, end − (m−1)·I), …, [end − I, end) with m = ⌈(end − start) / I⌉, oldest first;
 * every bucket is returned, empty ones included (`numReq` 0, lengths 0). Only `indices` of `rows` are
 * read (all rows when omitted); rows outside the buckets are ignored. Trace milliseconds throughout.
 */
export function bucketsEndingAt(
  rows: TraceColumns,
  range: { readonly startMs: number; readonly endMs: number },
  intervalMs: number,
  indices?: Iterable<number>,
): TrafficWindow[] {
  if (!(intervalMs > 0)) throw new RangeError(`bucket interval must be positive, got ${intervalMs}`);
  const span = (range.endMs - range.startMs) / intervalMs;
  const m = Math.max(0, Math.ceil(span - EPS * Math.max(1, span)));
  const firstStartMs = range.endMs - m * intervalMs;
  const count = new Array<number>(m).fill(0);
  const isl = new Array<number>(m).fill(0);
  const osl = new Array<number>(m).fill(0);
  const add = (i: number): void => {
    const j = Math.floor((rows.timestampMs[i] - firstStartMs) / intervalMs);
    if (!(j >= 0 && j < m)) return;
    count[j]++;
    isl[j] += rows.inputLength[i];
    osl[j] += rows.outputLength[i];
  };
  if (indices === undefined) for (let i = 0; i < rows.timestampMs.length; i++) add(i);
  else for (const i of indices) add(i);
  return count.map((c, j) => ({
    intervalStartS: (firstStartMs + j * intervalMs) / 1000,
    numReq: c,
    avgIsl: c > 0 ? isl[j] / c : 0,
    avgOsl: c > 0 ? osl[j] / c : 0,
  }));
}

/** Leading buckets without a request: the predictors skip them (leading zeros), so they are no observation. */
export function leadingEmptyBuckets(buckets: readonly { readonly numReq: number }[]): number {
  let i = 0;
  while (i < buckets.length && buckets[i].numReq === 0) i++;
  return i;
}

/** Observations a bucket series gives a predictor: every bucket from the first with traffic on. */
export function observationCount(buckets: readonly { readonly numReq: number }[]): number {
  return buckets.length - leadingEmptyBuckets(buckets);
}
