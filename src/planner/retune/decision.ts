/**
 * The decision of one window (docs/retune.md §7–§10, seed 000 "Read Retune Decisions", seed 003
 * "Scoring and Outcomes"): its outcome, its `retune_events` record and its effect.
 *
 * Precedence, first match wins (**fleetsim choice**; the seeds give each outcome's condition, not
 * their order):
 *
 * 1. `busy` — the window came due while a sweep was in flight; no sweep.
 * 2. `failed` — the sweep could not launch (no ready counts at the window start, a role with none).
 * 3. `timeout` — the sweep (or any task of it) ran past `timeout_seconds`; its results are discarded.
 * 4. `failed` — the sweep itself failed (a read error).
 * 5. `stale` — the deployed point at harvest is not the one the sweep was launched for.
 * 6. `kept`, reason `empty window` — no request in the window.
 * 7. `failed` — the current point failed to score (no baseline).
 * 8. `kept` — the best is the current point, does not clear the threshold, or changes nothing.
 * 9. `failed` — it would swap the predictor without enough warm-up observations, or its Planner
 *    changes no longer validate. Checked before the advisory branch, so an advisory decision is one an
 *    active Planner could apply.
 * 10. `advisory` with `advisory: true`, else `applied`.
 */

import type { SweepFailure } from "../../sweep/types.js";
import type { LoadPredictorFields, RetuneSettings } from "../types.js";
import type { RetuneCandidate } from "./grid.js";
import {
  type LivePoint,
  type LiveValue,
  livePoint,
  plannerChanges,
  pointKey,
  predictorKey,
  type RetunePoint,
  type RouterParameters,
} from "./points.js";
import {
  minimumObservations,
  type PredictorBase,
  type PredictorPresweepRecord,
} from "./predictorPresweep.js";
import {
  type CandidateSummary,
  clearsThreshold,
  improvementPercentage,
  objectiveSense,
  rankCandidates,
  scoreCandidate,
} from "./scoring.js";
import { type DecisionTiming, decisionLatencyS, decisionTiming } from "./timing.js";
import { launchTickS, type RetuneWindow } from "./windows.js";

export type RetuneOutcome = "applied" | "kept" | "advisory" | "busy" | "stale" | "timeout" | "failed";

/** One candidate replay's result. */
export type CandidateResult = { readonly status: "ok"; readonly summary: CandidateSummary } | SweepFailure;

/** What a finished sweep hands back. */
export interface SweepReport {
  /** Host wall-clock seconds of the whole sweep. */
  readonly wallS: number;
  /** Stopped at `timeout_seconds`. */
  readonly timedOut: boolean;
  /** A sweep-level failure (e.g. a read error), or null. */
  readonly error: string | null;
  /** The candidates replayed, after the pre-sweep winner was applied (`withPredictorWinner`). */
  readonly candidates: readonly RetuneCandidate[];
  readonly currentIndex: number;
  /** One per candidate; may be empty when nothing was replayed (an empty window, a failed read). */
  readonly results: readonly CandidateResult[];
  readonly presweep: PredictorPresweepRecord | null;
  /** History + window buckets that would warm a swapped predictor; null when none were bucketed. */
  readonly predictorWarmupObservations: number | null;
}

/** What happened to a window that came due. */
export type WindowAttempt =
  | { readonly kind: "busy" }
  | { readonly kind: "not_launched"; readonly reason: string }
  | {
      readonly kind: "swept";
      readonly sweep: SweepReport;
      /** The deployed point when the sweep is harvested (default: the point it launched from). */
      readonly currentAtHarvest?: RetunePoint;
    };

export interface DecisionInput {
  /** Decision ordinal n of `retune-<n>-w<k>`, 1-based in recording order. */
  readonly ordinal: number;
  readonly window: RetuneWindow;
  readonly numRequests: number;
  /** The current point at launch. */
  readonly previous: RetunePoint;
  readonly attempt: WindowAttempt;
}

export interface DecisionEnv {
  readonly settings: Pick<
    RetuneSettings,
    | "intervalS"
    | "timeoutS"
    | "decisionLatencyS"
    | "decisionLatencyScale"
    | "minImprovementPercentage"
    | "objective"
  >;
  /** Δ. */
  readonly tickS: number;
  readonly s0?: number;
  readonly advisory: boolean;
  /** For the minimum warm-up of a swapped predictor. */
  readonly predictorBase: PredictorBase;
  /** Re-validates Planner changes against the live configuration: an error message, or null when valid. */
  readonly validatePlannerChanges?: (changes: Readonly<Record<string, LiveValue>>) => string | null;
}

/** One `planner.retune_events` entry (§10), in prediction.json's names. */
export interface RetuneEventRecord {
  readonly decision_id: string;
  readonly outcome: RetuneOutcome;
  readonly reason: string | null;
  readonly window_index: number;
  readonly window_start_s: number;
  readonly window_end_s: number;
  readonly as_of_s: number;
  readonly launched_at_s: number | null;
  readonly decided_at_s: number;
  readonly num_requests: number;
  readonly num_candidates: number;
  readonly previous: LivePoint;
  readonly chosen: LivePoint | null;
  readonly planner_changes: Readonly<Record<string, LiveValue>>;
  readonly baseline_score: number | null;
  readonly best_score: number | null;
  readonly top: readonly (readonly [LivePoint, number])[];
  /** Candidates that produced no score, with why (a failed or killed replay worker, a timeout). */
  readonly failed_candidates: readonly (readonly [LivePoint, string])[];
  readonly predictor_presweep: PredictorPresweepRecord | null;
  readonly predictor_warmup: number | null;
  readonly sweep_wall_s: number | null;
  readonly decision_latency_s: number | null;
}

export interface RetuneDecision {
  readonly record: RetuneEventRecord;
  /** Null when no sweep ran (`busy`, not launched): the decision lands on the tick the window came due. */
  readonly timing: DecisionTiming | null;
  /** The current point after the decision: the chosen point when `applied`, else the previous one. */
  readonly current: RetunePoint;
  /** `applied` only: the router parameters in force from `timing.routerSwitchAtS`; else null. */
  readonly routerParameters: RouterParameters | null;
  /** `applied` only: Planner fields (live names) applied after the decision tick; else `{}`. */
  readonly plannerChanges: Readonly<Record<string, LiveValue>>;
}

export function decisionId(ordinal: number, windowIndex: number): string {
  return `retune-${ordinal}-w${windowIndex}`;
}

const TOP = 5;

interface Ranked {
  readonly scores: readonly (number | null)[];
  readonly errors: readonly (string | null)[];
  /** Scored candidates, best first. */
  readonly order: readonly number[];
}

function rank(sweep: SweepReport, env: DecisionEnv): Ranked | null {
  if (sweep.results.length === 0) return null;
  if (sweep.results.length !== sweep.candidates.length) {
    throw new RangeError(`${sweep.results.length} results for ${sweep.candidates.length} candidates`);
  }
  const { objective, intervalS } = env.settings;
  const scored = sweep.results.map((r) => {
    if (r.status === "ok") return scoreCandidate(r.summary, objective, intervalS);
    return { ok: false as const, error: r.status === "timeout" ? "timed out" : r.error };
  });
  const scores = scored.map((s) => (s.ok ? s.score : null));
  const errors = scored.map((s) => (s.ok ? null : s.error));
  return { scores, errors, order: rankCandidates(scores, sweep.currentIndex, objectiveSense(objective)) };
}

function fmt(x: number): string {
  return Number.isFinite(x) ? String(Number(x.toPrecision(6))) : String(x);
}

type Verdict = { readonly outcome: RetuneOutcome; readonly reason: string | null };

/** Steps 6–10 of the precedence, on a sweep that ran to completion for the deployed point. */
function judge(input: DecisionInput, sweep: SweepReport, ranked: Ranked | null, env: DecisionEnv): Verdict {
  if (input.numRequests === 0) return { outcome: "kept", reason: "empty window" };
  if (ranked === null) return { outcome: "failed", reason: "the sweep returned no candidate results" };
  const cur = sweep.currentIndex;
  const baseline = ranked.scores[cur];
  if (baseline === null) {
    return { outcome: "failed", reason: `current point failed to score: ${ranked.errors[cur]}` };
  }
  const best = ranked.order[0];
  if (best === cur) return { outcome: "kept", reason: "the current point ranks best" };
  const sense = objectiveSense(env.settings.objective);
  const bestScore = ranked.scores[best] as number;
  const minPct = env.settings.minImprovementPercentage;
  if (!clearsThreshold(bestScore, baseline, sense, minPct)) {
    const pct = improvementPercentage(bestScore, baseline, sense);
    return {
      outcome: "kept",
      reason: `the best candidate improves on the current point by ${fmt(pct)}%, not more than min_improvement_percentage (${minPct}%)`,
    };
  }
  const chosen = sweep.candidates[best].point;
  if (pointKey(chosen) === pointKey(input.previous)) {
    return { outcome: "kept", reason: "the best candidate changes nothing" };
  }
  const warmup = predictorWarmupShortfall(input.previous.predictor, chosen.predictor, sweep, env);
  if (warmup !== null) return { outcome: "failed", reason: warmup };
  const invalid = env.validatePlannerChanges?.(plannerChanges(input.previous, chosen)) ?? null;
  if (invalid !== null)
    return { outcome: "failed", reason: `Planner changes no longer validate: ${invalid}` };
  return { outcome: env.advisory ? "advisory" : "applied", reason: null };
}

/** Why a predictor swap cannot be prepared (fewer observations than the family's minimum), or null. */
function predictorWarmupShortfall(
  from: LoadPredictorFields,
  to: LoadPredictorFields,
  sweep: SweepReport,
  env: DecisionEnv,
): string | null {
  if (predictorKey(from) === predictorKey(to)) return null;
  const needed = minimumObservations(to, env.predictorBase);
  const have = sweep.predictorWarmupObservations ?? 0;
  if (have >= needed) return null;
  return `predictor warm-up too short: ${have} observations, ${to.loadPredictor} needs ${needed}`;
}

/** Decides one window. Pure: the caller runs the sweep and feeds its report. */
export function decideWindow(input: DecisionInput, env: DecisionEnv): RetuneDecision {
  const { window, previous, attempt } = input;
  const base = {
    decision_id: decisionId(input.ordinal, window.index),
    window_index: window.index,
    window_start_s: window.startS,
    window_end_s: window.endS,
    as_of_s: window.asOfS,
    num_requests: input.numRequests,
    previous: livePoint(previous),
    planner_changes: {},
    predictor_warmup: null,
  };
  const unchanged = { current: previous, routerParameters: null, plannerChanges: {} };

  if (attempt.kind !== "swept") {
    // No sweep ran: the decision is recorded on the tick the window came due.
    const record: RetuneEventRecord = {
      ...base,
      outcome: attempt.kind === "busy" ? "busy" : "failed",
      reason: attempt.kind === "busy" ? null : attempt.reason,
      launched_at_s: null,
      decided_at_s: launchTickS(window, env.tickS, env.s0),
      num_candidates: 0,
      chosen: null,
      baseline_score: null,
      best_score: null,
      top: [],
      failed_candidates: [],
      predictor_presweep: null,
      sweep_wall_s: null,
      decision_latency_s: null,
    };
    return { record, timing: null, ...unchanged };
  }

  const sweep = attempt.sweep;
  const timing = decisionTiming({
    asOfS: window.asOfS,
    tickS: env.tickS,
    latencyS: decisionLatencyS(env.settings, sweep.wallS),
    s0: env.s0,
  });
  const timedOut =
    sweep.timedOut ||
    sweep.wallS > env.settings.timeoutS ||
    sweep.results.some((r) => r.status === "timeout");
  // A timed-out sweep's tasks were all stopped: nothing it returned is scored.
  const ranked = timedOut || sweep.error !== null ? null : rank(sweep, env);
  const harvested = attempt.currentAtHarvest ?? previous;

  let verdict: Verdict;
  if (timedOut) verdict = { outcome: "timeout", reason: null };
  else if (sweep.error !== null) verdict = { outcome: "failed", reason: sweep.error };
  else if (pointKey(harvested) !== pointKey(previous)) verdict = { outcome: "stale", reason: null };
  else verdict = judge(input, sweep, ranked, env);

  const order = ranked?.order ?? [];
  const chosenIndex = order.length > 0 ? order[0] : null;
  const chosen = chosenIndex === null ? null : sweep.candidates[chosenIndex].point;
  const willChange = verdict.outcome === "applied" || verdict.outcome === "advisory";
  const changes = willChange && chosen !== null ? plannerChanges(previous, chosen) : {};
  const applied = verdict.outcome === "applied" && chosen !== null;
  const swapsPredictor = applied && predictorKey(chosen.predictor) !== predictorKey(previous.predictor);

  const record: RetuneEventRecord = {
    ...base,
    ...verdict,
    launched_at_s: timing.launchedAtS,
    decided_at_s: timing.decidedAtS,
    num_candidates: sweep.candidates.length,
    chosen: chosen === null ? null : livePoint(chosen),
    planner_changes: changes,
    baseline_score: ranked?.scores[sweep.currentIndex] ?? null,
    best_score: chosenIndex === null ? null : (ranked?.scores[chosenIndex] ?? null),
    top: order
      .slice(0, TOP)
      .map((i) => [livePoint(sweep.candidates[i].point), ranked?.scores[i] as number] as const),
    failed_candidates: failedCandidates(sweep),
    predictor_presweep: sweep.presweep,
    predictor_warmup: swapsPredictor ? sweep.predictorWarmupObservations : null,
    sweep_wall_s: sweep.wallS,
    decision_latency_s: timing.latencyS,
  };
  if (!applied) return { record, timing, ...unchanged };
  return { record, timing, current: chosen, routerParameters: chosen.router, plannerChanges: changes };
}

/** Candidates without a score, in candidate order, with the sweep's reason for each. */
function failedCandidates(sweep: SweepReport): (readonly [LivePoint, string])[] {
  const out: (readonly [LivePoint, string])[] = [];
  sweep.results.forEach((r, i) => {
    if (r.status === "ok") return;
    out.push([livePoint(sweep.candidates[i].point), r.status === "timeout" ? "timed out" : r.error] as const);
  });
  return out;
}
