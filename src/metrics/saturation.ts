/**
 * Saturation (docs/metrics.md "Saturation"): the backlog — requests that arrived and are still
 * queued — still grows at the end of the arrival period. A fleet that keeps up admits about as
 * fast as requests arrive; one short of capacity adds its deficit every second, so its latencies
 * depend on how long the trace is.
 *
 * The rule, over the time-series buckets up to the last one with arrivals: at least
 * `MIN_BUCKETS` of them, or the run is not judged; over the last quarter of them (at least 4),
 * the least-squares slope of the backlog × the stretch's length must exceed both `MIN_GROWTH`
 * requests and `GROWTH_SHARE` of the requests that arrived in the stretch. A fleet whose clients
 * give up on more than `GROWTH_SHARE` (and `MIN_GROWTH`) of the requests that arrived in the
 * stretch is saturated as well: with a client timeout an overload settles into a queue whose
 * length the timeouts bound, so the backlog stops growing while most requests fail. Pure.
 */

/** Growth above this share of the stretch's arrivals (and at least `MIN_GROWTH` requests) is saturation. */
const GROWTH_SHARE = 0.05;
export const MIN_GROWTH = 10;
/** Fewer buckets with arrivals than this: too short to tell. */
export const MIN_BUCKETS = 8;

export interface SaturationJudgement {
  /** Whether the run was long enough to judge (≥ MIN_BUCKETS buckets up to the last arrival). */
  readonly judged: boolean;
  readonly saturated: boolean;
  /** Length of the stretch examined (the last quarter of the arrival period), ms; 0 when not judged. */
  readonly windowMs: number;
  /** Backlog growth over that stretch (least-squares slope × its length), requests; 0 when not judged. */
  readonly growth: number;
  /** Arrived requests not served (still queued) by the end of the last bucket with arrivals. */
  readonly backlogAtLastArrival: number;
  /** Requests that arrived in the stretch and that their client abandoned (timed out); 0 when not judged. */
  readonly abandoned: number;
}

/**
 * Judges saturation from per-bucket counts: `arrivals[k]` requests arrived in bucket k and
 * `served[k]` left the backlog there (the caller decides what leaving means: the summary counts
 * a first admission or a rejection). A request abandoned by its client before it was served
 * stays in the backlog.
 */
export function judgeSaturation(
  intervalMs: number,
  arrivals: readonly number[],
  served: readonly number[],
  /** Requests abandoned by their client (timed out), by arrival bucket; none when absent. */
  abandonedByArrival: readonly number[] = [],
): SaturationJudgement {
  let last = -1;
  for (let k = 0; k < arrivals.length; k++) if (arrivals[k] > 0) last = k;
  const backlog: number[] = [];
  let b = 0;
  for (let k = 0; k <= last; k++) {
    b += arrivals[k] - served[k];
    backlog.push(b);
  }
  const backlogAtLastArrival = last < 0 ? 0 : backlog[last];
  if (last + 1 < MIN_BUCKETS) {
    return { judged: false, saturated: false, windowMs: 0, growth: 0, backlogAtLastArrival, abandoned: 0 };
  }
  const from = Math.min(last - 3, Math.floor(0.75 * (last + 1)));
  const n = last - from + 1;
  let sx = 0;
  let sy = 0;
  for (let k = from; k <= last; k++) {
    sx += k;
    sy += backlog[k];
  }
  const mx = sx / n;
  const my = sy / n;
  let sxy = 0;
  let sxx = 0;
  let arrived = 0;
  let abandoned = 0;
  for (let k = from; k <= last; k++) {
    sxy += (k - mx) * (backlog[k] - my);
    sxx += (k - mx) * (k - mx);
    arrived += arrivals[k];
    abandoned += abandonedByArrival[k] ?? 0;
  }
  const growth = (sxy / sxx) * n; // per bucket × buckets
  const bound = Math.max(MIN_GROWTH, GROWTH_SHARE * arrived);
  return {
    judged: true,
    saturated: growth > bound || abandoned > bound,
    windowMs: n * intervalMs,
    growth,
    backlogAtLastArrival,
    abandoned,
  };
}
