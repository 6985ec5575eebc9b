/**
 * Per-interval traffic windows of a Mooncake trace (`ai-dynamo/dynamo@8504b50:components/src/dynamo/planner/plugins/builtins/local_planner.py`, upstream
 * `offline/trace_data.py` `extract_metrics_from_mooncake`): feeds the predictor warm-up
 * (`load_predictor_warmup_trace`) and the AISimulate load-predictor pre-sweep (`ai-dynamo/dynamo@9f3266c:components/src/dynamo/planner/simulation/load_predictor.py`).
 */

/** The columns this needs; a `RequestTable` fits. */
export interface TraceColumns {
  /** Arrival times in ms, on the trace's own axis (upstream does not shift Mooncake timestamps). */
  readonly timestampMs: ArrayLike<number>;
  readonly inputLength: ArrayLike<number>;
  readonly outputLength: ArrayLike<number>;
}

export interface TrafficWindow {
  /** floor(ts / 1000 / I) · I. */
  readonly intervalStartS: number;
  readonly numReq: number;
  /** Plain mean over the window's requests; 0 for an empty window. */
  readonly avgIsl: number;
  readonly avgOsl: number;
}

/**
 * Groups requests by interval `floor(ts_ms / (1000·I))` and returns every interval from the first to the
 * last active one: interior gaps appear as zero windows, leading and trailing empty intervals do not
 * exist. Rows without a finite timestamp have no arrival time and are skipped (upstream rejects such
 * rows when parsing; the loader here represents a missing timestamp as NaN).
 */
export function extractMetricsFromMooncake(rows: TraceColumns, intervalS: number): TrafficWindow[] {
  if (!(Number.isFinite(intervalS) && intervalS > 0))
    throw new RangeError(`intervalS must be a positive number, got ${intervalS}`);
  const n = rows.timestampMs.length;
  if (rows.inputLength.length < n || rows.outputLength.length < n)
    throw new RangeError("inputLength and outputLength must have an entry per timestamp");
  const intervalMs = intervalS * 1000;
  const groups = new Map<number, { count: number; isl: number; osl: number }>();
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const ts = rows.timestampMs[i];
    if (!Number.isFinite(ts)) continue;
    const index = Math.floor(ts / intervalMs);
    let g = groups.get(index);
    if (g === undefined) {
      g = { count: 0, isl: 0, osl: 0 };
      groups.set(index, g);
    }
    g.count++;
    g.isl += rows.inputLength[i];
    g.osl += rows.outputLength[i];
    if (index < first) first = index;
    if (index > last) last = index;
  }
  const out: TrafficWindow[] = [];
  for (let index = first; index <= last; index++) {
    const g = groups.get(index);
    out.push({
      intervalStartS: index * intervalS,
      numReq: g?.count ?? 0,
      avgIsl: g ? g.isl / g.count : 0,
      avgOsl: g ? g.osl / g.count : 0,
    });
  }
  return out;
}
