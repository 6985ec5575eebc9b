/**
 * Validated `planner.retune` → RetuneSettings: defaults applied, domains expanded against the
 * scaling modes, the scoring SLA and the trace history resolved (docs/retune.md).
 */
import type { PlannerSettings, RetuneSettings } from "../../planner/types.js";
import type { PredictConfigOutput } from "../schema/index.js";
import type { PlannerScaling } from "../schema/planner.js";
import { MINIMIZED_OBJECTIVES, RETUNE_DEFAULTS, retuneGrid } from "../schema/retune.js";

/** `null` without `planner.retune`. `planner` is the Planner the section belongs to, resolved. */
export function resolveRetune(
  config: PredictConfigOutput,
  planner: PlannerSettings,
  scaling: PlannerScaling,
): RetuneSettings | null {
  const r = config.planner.retune;
  if (r === undefined) return null;
  const grid = retuneGrid(r, scaling);
  const sla = config.evaluation.sla;
  return {
    intervalS: r.interval_seconds,
    graceS: r.grace_seconds,
    maxParallel: r.max_parallel,
    timeoutS: r.timeout_seconds ?? r.interval_seconds,
    decisionLatencyS: r.decision_latency_seconds,
    decisionLatencyScale: r.decision_latency_scale ?? RETUNE_DEFAULTS.decision_latency_scale,
    minImprovementPercentage: r.min_improvement_percentage,
    maxCandidates: r.max_candidates,
    objective: r.objective,
    objectiveSense: MINIMIZED_OBJECTIVES.has(r.objective) ? "min" : "max",
    // Predict fills the scoring SLA from evaluation.sla, else the Planner's targets (seed 000).
    slaTtftMs: r.sla_ttft_ms ?? sla?.ttft_ms ?? planner.ttftMs,
    slaItlMs: r.sla_itl_ms ?? sla?.itl_ms ?? planner.itlMs,
    retuneOnly: r.retune_only,
    historyS: scaling.throughput ? (r.history_seconds ?? defaultHistorySeconds(planner, grid)) : null,
    router: grid.router,
    plannerDimensions: grid.plannerDimensions,
    loadPredictorCandidates: grid.loadPredictorCandidates,
    gridSize: grid.size,
  };
}

/**
 * The throughput interval × the largest `prophet_window_size` among the predictor candidates
 * and the current predictor: 180 s × 50 = 9,000 s in seed 000 Scenario 2.
 */
function defaultHistorySeconds(planner: PlannerSettings, grid: ReturnType<typeof retuneGrid>): number {
  const windows = (grid.loadPredictorCandidates ?? []).map((c) => c.fields.prophetWindowSize ?? 0);
  return planner.throughputAdjustmentIntervalS * Math.max(planner.prophetWindowSize, ...windows);
}
