import type { RunSpec } from "../config/runSpec.js";
import { buildSummary } from "../metrics/summary.js";
import { buildTimeseries } from "../metrics/timeline.js";
import type { PlannerReport } from "../output/planner.js";
import type { Prediction } from "../output/prediction.js";
import type { ReplayResult } from "../sim/result.js";
import { costKeys, runCost } from "./cost.js";
import { buildPerRequest } from "./perRequest.js";
import { referenceSummaryKeys } from "./provenance.js";
import { buildRunInfo } from "./runInfo.js";

/** The document written as prediction.json: its contract (types and strict schema) is src/output/. */
export type { Prediction };

export function buildPrediction(
  spec: RunSpec,
  result: ReplayResult,
  capturePerRequest: boolean,
  planner: PlannerReport | null = null,
): Prediction {
  const perRequest = capturePerRequest ? buildPerRequest(result) : null;
  // The time series first: its many small percentile selections get `selectRanks` compiled
  // before the summary's few large ones run it (on a long run, ~40 ms of interpreted selection;
  // docs/performance.md). The two read the replay's result and change nothing in it.
  const timeseries = buildTimeseries(result.timeline, result.requests, spec.sla);
  const built = buildSummary(result, spec.sla);
  const summary = { ...built, ...costKeys(spec, built), ...referenceSummaryKeys(spec) };
  return {
    // The engine stack's layout (docs/output.md "Layout"): the summary keys at the top level too.
    ...(spec.stack === "engine" ? summary : {}),
    summary,
    planner,
    per_request: perRequest,
    coverage: {
      capture_per_request: capturePerRequest,
      capture_planner_details: planner !== null,
      capture_canonical_evidence: false,
      per_request_records: perRequest === null ? 0 : perRequest.length,
    },
    run: { ...buildRunInfo(spec, result.workload), ...runCost(spec) },
    timeseries,
    ...(result.kvOffload === null ? {} : { kv_offload: result.kvOffload }),
    ...(result.g3Offload === null ? {} : { g3_offload: result.g3Offload }),
  };
}
