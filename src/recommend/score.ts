/**
 * Scoring a replayed candidate (the reference's `docs/sweeper/optimization-goals.md`): the
 * objective each `optimization.target` reads from the prediction summary, normalised so that
 * larger is better (minimised targets are negated), the strict aggregate SLA filter, the
 * `min_gpus` goodput floor, the scalar ranking (best score, ties → fewer GPUs) and the Pareto
 * front of (throughput_per_gpu, throughput_per_user), sorted by its last objective.
 */

import type { SlaSpec } from "../config/runSpec.js";
import type { OptimizationTarget } from "../config/schema/recommend.js";
import type { Rejection } from "./materialize.js";

export type Metrics = Readonly<Record<string, number>>;

export const PARETO_OBJECTIVES = ["throughput_per_gpu", "throughput_per_user"] as const;

export interface ScoreSettings {
  readonly target: OptimizationTarget;
  readonly strictSla: boolean;
  readonly sla: SlaSpec | null;
  readonly minGoodputRps: number | null;
}

export interface Scored {
  /** Larger is better; for Pareto the first objective's raw value. */
  readonly score: number;
  /** The Pareto objectives (natural units), or null for a scalar target. */
  readonly objectives: Readonly<Record<string, number>> | null;
  /** What the optimizer is told: the score, or the objective vector. */
  readonly outcome: readonly number[];
}

/** Time-averaged provisioned GPUs: gpu_hours / run hours (0 when either is missing). */
export function avgGpus(m: Metrics): number {
  const hours = (m["duration_ms"] ?? 0) / 3.6e6;
  const gpuHours = m["gpu_hours"] ?? 0;
  return gpuHours > 0 && hours > 0 ? gpuHours / hours : 0;
}

function perGpu(value: number, m: Metrics): number {
  const g = avgGpus(m);
  return g > 0 ? value / g : 0;
}

/** The objective value of a scalar target, in its natural units (not negated). */
export function objectiveValue(target: OptimizationTarget, m: Metrics, usedGpus: number): number {
  switch (target) {
    case "throughput":
      return m["output_throughput_tok_s"] ?? 0;
    case "throughput_per_gpu":
      return perGpu(m["output_throughput_tok_s"] ?? 0, m);
    case "throughput_per_user":
      return m["mean_output_token_throughput_per_user"] ?? 0;
    case "goodput":
      return m["goodput_output_throughput_tok_s"] ?? 0;
    case "goodput_per_gpu":
      return perGpu(m["goodput_output_throughput_tok_s"] ?? 0, m);
    case "ttft":
      return (m["num_ttft_samples"] ?? 0) > 0
        ? (m["mean_ttft_ms"] ?? Number.POSITIVE_INFINITY)
        : Number.POSITIVE_INFINITY;
    case "e2e_latency":
      return (m["num_e2e_latency_samples"] ?? 0) > 0
        ? (m["mean_e2e_latency_ms"] ?? Number.POSITIVE_INFINITY)
        : Number.POSITIVE_INFINITY;
    case "min_gpus":
      return usedGpus;
    case "cost_per_good_request":
      return m["cost_per_good_request_usd"] ?? Number.POSITIVE_INFINITY;
    case "pareto":
      return perGpu(m["output_throughput_tok_s"] ?? 0, m);
  }
}

const MINIMISED: ReadonlySet<OptimizationTarget> = new Set([
  "ttft",
  "e2e_latency",
  "min_gpus",
  "cost_per_good_request",
]);

/** Metric keys a target needs in the summary; a missing one is a runner-contract failure. */
function requiredKeys(target: OptimizationTarget): string[] {
  switch (target) {
    case "goodput":
    case "goodput_per_gpu":
      return ["goodput_output_throughput_tok_s"];
    case "min_gpus":
      return ["goodput_request_throughput_rps", "goodput_output_throughput_tok_s"];
    case "cost_per_good_request":
      return ["goodput_completed_requests", "cost_per_good_request_usd"];
    default:
      return ["output_throughput_tok_s"];
  }
}

/**
 * Scores a replayed candidate, or says why it does not count: no completed request, a missing or
 * non-finite metric, the strict aggregate SLA, the `min_gpus` goodput floor.
 */
export function scoreCandidate(s: ScoreSettings, m: Metrics, usedGpus: number): Scored | Rejection {
  for (const key of requiredKeys(s.target)) {
    if (!(key in m)) {
      return {
        status: "failed",
        category: "runner_contract",
        reason: `${s.target} objective requires ${key}`,
      };
    }
  }
  const bad = Object.entries(m).find(([, v]) => typeof v !== "number" || !Number.isFinite(v));
  if (bad !== undefined) {
    return {
      status: "failed",
      category: "invalid_metrics",
      reason: `metric ${bad[0]} is not a finite number`,
    };
  }
  if ((m["completed_requests"] ?? 0) === 0) {
    return { status: "infeasible", category: "no_samples", reason: "no request completed" };
  }
  if (s.strictSla || s.target === "min_gpus") {
    const violation = slaViolation(s.sla, m);
    if (violation !== null) return { status: "infeasible", category: "sla_constraint", reason: violation };
  }
  if (s.target === "min_gpus" && s.minGoodputRps !== null) {
    const rps = m["goodput_request_throughput_rps"] ?? 0;
    if (!(rps >= s.minGoodputRps)) {
      return {
        status: "infeasible",
        category: "sla_constraint",
        reason: `goodput_request_throughput_rps ${fmt(rps)} is below optimization.constraints.min_goodput_rps=${s.minGoodputRps}`,
      };
    }
  }
  if (s.target === "pareto") {
    const objectives = {
      throughput_per_gpu: perGpu(m["output_throughput_tok_s"] ?? 0, m),
      throughput_per_user: m["mean_output_token_throughput_per_user"] ?? 0,
    };
    return {
      score: objectives.throughput_per_gpu,
      objectives,
      outcome: PARETO_OBJECTIVES.map((k) => objectives[k]),
    };
  }
  const value = objectiveValue(s.target, m, usedGpus);
  if (!Number.isFinite(value)) {
    return { status: "infeasible", category: "no_samples", reason: `${s.target} has no qualifying samples` };
  }
  const score = MINIMISED.has(s.target) ? -value : value;
  // min_gpus: fewer GPUs first, then more goodput (a fraction below one GPU step).
  const outcome =
    s.target === "min_gpus" ? [score + 0.5 * squash(m["goodput_output_throughput_tok_s"] ?? 0)] : [score];
  return { score, objectives: null, outcome };
}

/** x / (1 + x): order-preserving into [0, 1). */
function squash(x: number): number {
  return x > 0 ? x / (1 + x) : 0;
}

/** The first aggregate-mean SLA bound a candidate exceeds (inclusive bounds), or null. */
export function slaViolation(sla: SlaSpec | null, m: Metrics): string | null {
  if (sla === null) return null;
  const checks: [number | null, string, string][] = [
    [sla.ttftMs, "mean_ttft_ms", "ttft_ms"],
    [sla.itlMs, "mean_tpot_ms", "itl_ms"],
    [sla.e2eMs, "mean_e2e_latency_ms", "e2e_ms"],
  ];
  for (const [bound, key, name] of checks) {
    if (bound === null) continue;
    const v = m[key];
    if (v === undefined || !Number.isFinite(v))
      return `${key} is missing, required by evaluation.sla.${name}`;
    if (v > bound) return `${key} ${fmt(v)} exceeds evaluation.sla.${name}=${bound}`;
  }
  return null;
}

function fmt(x: number): string {
  return Number(x.toPrecision(6)).toString();
}

/** A feasible candidate as ranking sees it. */
export interface Ranked {
  readonly id: string;
  readonly score: number;
  readonly usedGpus: number;
  readonly objectives: Readonly<Record<string, number>> | null;
  readonly metrics: Metrics;
}

/**
 * Best first: higher score, then fewer GPUs; `min_gpus` breaks equal GPU counts by more goodput,
 * then lower mean E2E latency; the candidate id last, so the order is total.
 */
export function rank<T extends Ranked>(target: OptimizationTarget, xs: readonly T[]): T[] {
  return [...xs].sort((a, b) => {
    if (b.score !== a.score) return b.score - a.score;
    if (a.usedGpus !== b.usedGpus) return a.usedGpus - b.usedGpus;
    if (target === "min_gpus") {
      const g =
        (b.metrics["goodput_output_throughput_tok_s"] ?? 0) -
        (a.metrics["goodput_output_throughput_tok_s"] ?? 0);
      if (g !== 0) return g;
      const e = (a.metrics["mean_e2e_latency_ms"] ?? 0) - (b.metrics["mean_e2e_latency_ms"] ?? 0);
      if (e !== 0) return e;
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
}

/** The non-dominated candidates (both objectives maximised), sorted by the last objective ascending. */
export function paretoFront<T extends Ranked>(xs: readonly T[]): T[] {
  const obj = (x: T): number[] => PARETO_OBJECTIVES.map((k) => x.objectives?.[k] ?? 0);
  const dominates = (a: number[], b: number[]): boolean =>
    a.every((v, i) => v >= b[i]) && a.some((v, i) => v > b[i]);
  const front = xs.filter((x) => !xs.some((y) => y !== x && dominates(obj(y), obj(x))));
  const last = PARETO_OBJECTIVES.length - 1;
  return front.sort((a, b) => obj(a)[last] - obj(b)[last] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
