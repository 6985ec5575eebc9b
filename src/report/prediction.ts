import type { RunSpec } from "../config/runSpec.js";
import { buildSummary, type Summary } from "../metrics/summary.js";
import { buildTimeseries, type TimeseriesReport } from "../metrics/timeline.js";
import type { PlannerReport } from "../sim/plannerAdapter.js";
import type { ReplayResult } from "../sim/replay.js";
import { buildPerRequest, type PerRequestRecord } from "./perRequest.js";
import { buildRunInfo, type RunInfo } from "./runInfo.js";

/** The document written as prediction.json (aisimulate.md §6.1). */
export interface Prediction {
  summary: Summary;
  /** Planner details; null with `planner.policy: disabled`. */
  planner: PlannerReport | null;
  /** Filled only with `--capture-per-request`; otherwise null (as the reference writes it). */
  per_request: PerRequestRecord[] | null;
  coverage: {
    capture_per_request: boolean;
    capture_planner_details: boolean;
    capture_canonical_evidence: boolean;
    per_request_records: number;
  };
  /**
   * fleetsim extension: what was simulated — deployment, router, Planner, traffic and its request
   * count (docs/metrics.md "What was simulated"). Deterministic: no host time, no absolute path.
   */
  run: RunInfo;
  /** fleetsim extension: bucketed latency, throughput and worker state over time (docs/metrics.md). */
  timeseries: TimeseriesReport;
}

export function buildPrediction(
  spec: RunSpec,
  result: ReplayResult,
  capturePerRequest: boolean,
  planner: PlannerReport | null = null,
): Prediction {
  const perRequest = capturePerRequest ? buildPerRequest(result) : null;
  return {
    summary: buildSummary(result, spec.sla),
    planner,
    per_request: perRequest,
    coverage: {
      capture_per_request: capturePerRequest,
      capture_planner_details: planner !== null,
      capture_canonical_evidence: false,
      per_request_records: perRequest === null ? 0 : perRequest.length,
    },
    run: buildRunInfo(spec, result.table),
    timeseries: buildTimeseries(result.timeline, result.collector),
  };
}
