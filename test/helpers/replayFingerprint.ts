/** A replay's whole result as one string, for tests that compare two ways of running it byte for byte. */
import type { RunSpec } from "../../src/config/runSpec.js";
import { buildSummary } from "../../src/metrics/summary.js";
import { buildTimeseries } from "../../src/metrics/timeline.js";
import { stableStringify } from "../../src/report/json.js";
import { buildPerRequest } from "../../src/report/perRequest.js";
import type { ReplayResult } from "../../src/sim/replay.js";

/**
 * Everything a replay produced, as one string (sorted keys), host time left out. `collectLimit`:
 * the exact distributions' in-memory limit (a small one takes their bounded-memory path).
 */
export function fingerprint(spec: RunSpec, r: ReplayResult, collectLimit?: number): string {
  // Every arrived request's columns as the log holds them (every collector column), and the
  // counters. Rows that never arrived (past a time cap) hold nothing; a stream does not read them.
  const c = r.requests.columns();
  const columns: Record<string, unknown> = {
    arrived: r.collector.arrived,
    terminated: r.collector.terminated,
    admissionCount: r.collector.admissionCount,
  };
  const arrived = (_: unknown, row: number): boolean => !Number.isNaN(c.arrival[row]);
  for (const [k, v] of Object.entries(c)) {
    if (ArrayBuffer.isView(v))
      columns[k] = Array.from(v as unknown as ArrayLike<number>, (x) => (Number.isNaN(x) ? "NaN" : x)).filter(
        arrived,
      );
  }
  const summary: Record<string, unknown> = { ...buildSummary(r, spec.sla, collectLimit) };
  for (const k of ["wall_time_ms", "processed_tokens_per_s", "processed_output_tokens_per_s"])
    delete summary[k];
  return stableStringify({
    columns,
    summary,
    perRequest: buildPerRequest(r),
    endTimeMs: r.endTimeMs,
    passes: r.passes,
    preemptions: r.preemptions,
    workerSeconds: [r.prefillWorkerSeconds, r.decodeWorkerSeconds],
    lifecycle: r.lifecycleOperations,
    timeline: r.timeline,
    timeseries: buildTimeseries(r.timeline, r.requests, spec.sla, collectLimit),
    stalled: r.stalled,
  });
}
