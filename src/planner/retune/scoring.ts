/**
 * Candidate scores (docs/retune.md §7, seed 003 "Scoring and Outcomes"): AISimulate's
 * objective_value for the objective's target (`ai-dynamo/aisimulate@ea68be2:python/aisimulate/src/aisimulate/recommend.py`), rescaled to the window for
 * the Goodput objectives only, failing closed when an input is missing.
 */
import type { RetuneObjective } from "../types.js";

/** The prediction.json summary keys scoring reads (a candidate replay's `Summary` fits). */
export interface CandidateSummary {
  readonly duration_ms?: number | null;
  readonly gpu_hours?: number | null;
  readonly completed_requests?: number | null;
  /** Present only when the replay had a scoring SLA. */
  readonly goodput_output_throughput_tok_s?: number | null;
  readonly output_throughput_tok_s?: number | null;
  readonly mean_output_token_throughput_per_user?: number | null;
  readonly mean_ttft_ms?: number | null;
  readonly mean_e2e_latency_ms?: number | null;
  readonly num_ttft_samples?: number | null;
  readonly num_e2e_latency_samples?: number | null;
}

export type Sense = "max" | "min";

export type ScoreResult =
  | { readonly ok: true; readonly score: number; readonly objectiveValue: number }
  | { readonly ok: false; readonly error: string };

export function objectiveSense(objective: RetuneObjective): Sense {
  return objective === "TTFT" || objective === "E2ELatency" ? "min" : "max";
}

type Key = keyof CandidateSummary;

class MissingInput extends Error {}

function finite(s: CandidateSummary, key: Key): number {
  const v = s[key];
  if (typeof v !== "number" || !Number.isFinite(v)) throw new MissingInput(`summary lacks ${key}`);
  return v;
}

function positive(s: CandidateSummary, key: Key): number {
  const v = finite(s, key);
  if (!(v > 0)) throw new MissingInput(`summary has non-positive ${key} (${v})`);
  return v;
}

/** Samples behind a per-request mean: the dedicated count when reported, else completed requests. */
function requireSamples(s: CandidateSummary, countKey: Key | null, what: string): void {
  const count = countKey !== null && typeof s[countKey] === "number" ? finite(s, countKey) : null;
  const n = count ?? finite(s, "completed_requests");
  if (!(n > 0)) throw new MissingInput(`no ${what} samples`);
}

/** avg_gpu = gpu_hours / (duration_ms / 3.6e6): GPUs held on average over the replay. */
function avgGpu(s: CandidateSummary): number {
  return positive(s, "gpu_hours") / (positive(s, "duration_ms") / 3.6e6);
}

/** AISimulate's objective_value for the objective's target. */
function objectiveValue(s: CandidateSummary, objective: RetuneObjective): number {
  switch (objective) {
    case "Goodput":
      return finite(s, "goodput_output_throughput_tok_s");
    case "GoodputPerGPU":
      return finite(s, "goodput_output_throughput_tok_s") / avgGpu(s);
    case "Throughput":
      return finite(s, "output_throughput_tok_s");
    case "ThroughputPerGPU":
      return finite(s, "output_throughput_tok_s") / avgGpu(s);
    case "ThroughputPerUser":
      // A mean over no request would be a zero that ties every candidate: fail closed instead.
      requireSamples(s, null, "per-user throughput");
      return finite(s, "mean_output_token_throughput_per_user");
    case "TTFT":
      requireSamples(s, "num_ttft_samples", "TTFT");
      return finite(s, "mean_ttft_ms");
    case "E2ELatency":
      requireSamples(s, "num_e2e_latency_samples", "E2E latency");
      return finite(s, "mean_e2e_latency_ms");
  }
}

/**
 * One candidate's score. Goodput and GoodputPerGPU are rescaled to SLA-good tokens per window second
 * (× duration_ms / (T·1000)): every candidate replays the same tokens and only its drain differs, which
 * the SLA already penalizes. The other objectives are the objective value itself. Inputs of the
 * objective only: Goodput needs goodput and a positive duration, the per-GPU objectives a positive
 * `gpu_hours` and `duration_ms`, the per-request means at least one sample.
 */
export function scoreCandidate(
  summary: CandidateSummary,
  objective: RetuneObjective,
  windowS: number,
): ScoreResult {
  try {
    const value = objectiveValue(summary, objective);
    if (objective === "Goodput" || objective === "GoodputPerGPU") {
      const score = (value * positive(summary, "duration_ms")) / (windowS * 1000);
      return { ok: true, score, objectiveValue: value };
    }
    return { ok: true, score: value, objectiveValue: value };
  } catch (err) {
    if (err instanceof MissingInput) return { ok: false, error: `${objective}: ${err.message}` };
    throw err;
  }
}

/** Is a better than b in this sense (strictly)? */
function better(a: number, b: number, sense: Sense): boolean {
  return sense === "max" ? a > b : a < b;
}

/**
 * Indices of the scored candidates (null = failed), best first: by score, ties to the current point,
 * then to the canonical (index) order.
 */
export function rankCandidates(
  scores: readonly (number | null)[],
  currentIndex: number,
  sense: Sense,
): number[] {
  const scored: number[] = [];
  scores.forEach((s, i) => {
    if (s !== null) scored.push(i);
  });
  return scored.sort((i, j) => {
    const a = scores[i] as number;
    const b = scores[j] as number;
    if (better(a, b, sense)) return -1;
    if (better(b, a, sense)) return 1;
    if (i === currentIndex) return -1;
    if (j === currentIndex) return 1;
    return i - j;
  });
}

/**
 * How much `best` improves on the baseline, in percent of the baseline (positive = better in the
 * objective's sense). A zero baseline gives +Infinity for any strict gain and 0 otherwise.
 */
export function improvementPercentage(best: number, baseline: number, sense: Sense): number {
  const gain = sense === "max" ? best - baseline : baseline - best;
  if (baseline === 0) return gain > 0 ? Number.POSITIVE_INFINITY : gain < 0 ? Number.NEGATIVE_INFINITY : 0;
  return (gain / Math.abs(baseline)) * 100;
}

/**
 * The applied-threshold test: `best` beats the baseline by more than min_improvement_percentage / 100 ×
 * the baseline (strictly). A zero baseline needs any strict gain; a zero latency is never beaten.
 */
export function clearsThreshold(
  best: number,
  baseline: number,
  sense: Sense,
  minImprovementPercentage: number,
): boolean {
  const gain = sense === "max" ? best - baseline : baseline - best;
  return gain > (minImprovementPercentage / 100) * baseline;
}
